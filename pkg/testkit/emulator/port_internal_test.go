package emulator

import (
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// A port FreePort hands to an emulator is closed again before the emulator binds it. A port
// from the kernel's ephemeral range can be taken in between by any connection a test dials
// (every client socket takes one), and under load one was: an environment's RIE exited before
// it was ready. Below that range only another FreePort can pick the same port.
func TestFreePort_is_below_the_ephemeral_range_and_free(t *testing.T) {
	lo, _ := ephemeralRange()
	if from, to := portsOutsideEphemeral(); from != minPort || to != lo {
		t.Skipf("this kernel's ephemeral ports start at %d: FreePort picks in [%d, %d)", lo, from, to)
	}
	seen := map[int]bool{}
	for range 200 {
		p, err := FreePort()
		if err != nil {
			t.Fatal(err)
		}
		if p < minPort || p >= lo {
			t.Fatalf("FreePort gave %d; want a port in [%d, %d), below the kernel's ephemeral ports", p, minPort, lo)
		}
		seen[p] = true
	}
	if len(seen) < 150 {
		t.Errorf("200 calls gave %d distinct ports; want them spread, so that parallel packages rarely pick the same", len(seen))
	}
	p, err := FreePort()
	if err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(p))
	if err != nil {
		t.Fatalf("the port FreePort gave cannot be bound: %v", err)
	}
	_ = l.Close()
}

func TestPortRange_reads_the_kernels_setting_and_falls_back_to_linuxs_default(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		name, text string
		lo, hi     int
	}{
		{"as the kernel writes it", "20000\t30000\n", 20000, 30000},
		{"spaces", "  1024 65535 ", 1024, 65535},
		{"reversed", "30000\t20000\n", 32768, 60999},
		{"past the last port", "20000\t70000\n", 32768, 60999},
		{"one number", "20000\n", 32768, 60999},
	} {
		f := filepath.Join(dir, strings.ReplaceAll(c.name, " ", "-"))
		if err := os.WriteFile(f, []byte(c.text), 0o644); err != nil {
			t.Fatal(err)
		}
		if lo, hi := portRange(f); lo != c.lo || hi != c.hi {
			t.Errorf("%s (%q): [%d, %d]; want [%d, %d]", c.name, c.text, lo, hi, c.lo, c.hi)
		}
	}
	if lo, hi := portRange(filepath.Join(dir, "missing")); lo != 32768 || hi != 60999 {
		t.Errorf("no file: [%d, %d]; want Linux's default [32768, 60999]", lo, hi)
	}
}
