package localcloud_test

import (
	"bufio"
	"encoding/hex"
	"fmt"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/onceflow/onceflow/infra/localcloud"
)

// listener is a listening TCP socket of this machine, from /proc/net/tcp and tcp6.
type listener struct {
	ip   net.IP
	port int
}

// listeners returns the machine's listening TCP sockets by socket inode.
func listeners(t *testing.T) map[string]listener {
	t.Helper()
	out := map[string]listener{}
	for _, file := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		f, err := os.Open(file)
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(f)
		sc.Scan() // header
		for sc.Scan() {
			fields := strings.Fields(sc.Text())
			if len(fields) < 10 || fields[3] != "0A" { // 0A: LISTEN
				continue
			}
			addr, port, _ := strings.Cut(fields[1], ":")
			raw, err := hex.DecodeString(addr)
			if err != nil {
				t.Fatalf("%s: %q: %v", file, fields[1], err)
			}
			for i := 0; i+4 <= len(raw); i += 4 { // each 32-bit word is in host (little-endian) order
				raw[i], raw[i+1], raw[i+2], raw[i+3] = raw[i+3], raw[i+2], raw[i+1], raw[i]
			}
			p, _ := strconv.ParseInt(port, 16, 32)
			out[fields[9]] = listener{ip: net.IP(raw), port: int(p)}
		}
		f.Close()
	}
	return out
}

// socketsOf returns the socket inodes process pid holds.
func socketsOf(pid int) []string {
	fds, _ := filepath.Glob(fmt.Sprintf("/proc/%d/fd/*", pid))
	var out []string
	for _, fd := range fds {
		if link, err := os.Readlink(fd); err == nil && strings.HasPrefix(link, "socket:[") {
			out = append(out, strings.TrimSuffix(strings.TrimPrefix(link, "socket:["), "]"))
		}
	}
	return out
}

func TestLocalCloud_everything_it_runs_listens_on_loopback_only(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("reads listening sockets from /proc")
	}
	c := cloud(t)
	ep := c.Endpoints()
	all := listeners(t)
	checked := 0
	check := func(what string, l listener) {
		checked++
		if !l.ip.IsLoopback() {
			t.Errorf("%s listens on %s:%d; want loopback only", what, l.ip, l.port)
		}
	}
	// Every endpoint: the emulators (the cloud's own or those of `make test`), the API, the
	// Lambda API, the issuer, the SSM parameter store and the gatekeeper.
	for name, u := range map[string]string{"DynamoDB": ep.DynamoDB, "SQS": ep.SQS, "Kinesis": ep.Kinesis, "API": ep.APIURL, "Lambda API": ep.LambdaURL,
		"issuer": ep.Issuer, "parameter store": c.ParameterStoreURL(), "gatekeeper": ep.Gatekeeper} {
		pu, err := url.Parse(u)
		if err != nil || pu.Port() == "" {
			t.Fatalf("%s endpoint %q has no port", name, u)
		}
		port, _ := strconv.Atoi(pu.Port())
		found := false
		for _, l := range all {
			if l.port == port {
				found = true
				check(name, l)
			}
		}
		if !found {
			t.Errorf("%s endpoint %s: no listening socket found", name, u)
		}
	}
	// Every socket any process the cloud started listens on (emulators, runtime emulators).
	state, err := localcloud.ReadState(c.StateDir())
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range state.Processes {
		for _, inode := range socketsOf(p.PID) {
			if l, ok := all[inode]; ok {
				check(p.Name, l)
			}
		}
	}
	if checked < 6+len(state.Processes) {
		t.Errorf("checked %d listeners; want at least one per endpoint and per process (%d processes)", checked, len(state.Processes))
	}
}
