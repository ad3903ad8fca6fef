package localcloud

import (
	"net"
	"strconv"
	"testing"
)

// A port freePort hands to an emulator is closed again before the emulator binds it. A port
// from the kernel's ephemeral range can be taken in between by any connection a test dials
// (every client socket takes one), and under load one was: an environment's RIE exited before
// it was ready. Below that range only another freePort can pick the same port.
func TestFreePort_is_below_the_ephemeral_range_and_free(t *testing.T) {
	lo, _ := ephemeralRange()
	if from, to := portsOutsideEphemeral(); from != minPort || to != lo {
		t.Skipf("this kernel's ephemeral ports start at %d: freePort picks in [%d, %d)", lo, from, to)
	}
	seen := map[int]bool{}
	for range 200 {
		p, err := freePort()
		if err != nil {
			t.Fatal(err)
		}
		if p < minPort || p >= lo {
			t.Fatalf("freePort gave %d; want a port in [%d, %d), below the kernel's ephemeral ports", p, minPort, lo)
		}
		seen[p] = true
	}
	if len(seen) < 150 {
		t.Errorf("200 calls gave %d distinct ports; want them spread, so that parallel packages rarely pick the same", len(seen))
	}
	p, err := freePort()
	if err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(p))
	if err != nil {
		t.Fatalf("the port freePort gave cannot be bound: %v", err)
	}
	_ = l.Close()
}

func TestEphemeralRange_reads_the_kernels_setting(t *testing.T) {
	lo, hi := ephemeralRange()
	if lo <= 0 || hi < lo || hi > 65535 {
		t.Fatalf("ephemeral range [%d, %d]; want a range of ports", lo, hi)
	}
}
