package emulator

import (
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"strconv"
	"strings"
)

// minPort is the lowest port FreePort hands out: above the well-known and most registered
// services' ports.
const minPort = 10000

// ephemeralRange is the kernel's range of ports for client sockets and binds to port 0
// (net.ipv4.ip_local_port_range), Linux's default when it cannot be read.
func ephemeralRange() (lo, hi int) { return portRange("/proc/sys/net/ipv4/ip_local_port_range") }

// portRange reads a range of ports as ip_local_port_range gives it ("32768\t60999"), Linux's
// default when the file cannot be read or says something else.
func portRange(file string) (lo, hi int) {
	b, err := os.ReadFile(file)
	if err == nil {
		if f := strings.Fields(string(b)); len(f) == 2 {
			l, err1 := strconv.Atoi(f[0])
			h, err2 := strconv.Atoi(f[1])
			if err1 == nil && err2 == nil && l > 0 && h >= l && h <= 65535 {
				return l, h
			}
		}
	}
	return 32768, 60999
}

// FreePort returns a free loopback port for an emulator to bind, picked at random below the
// kernel's ephemeral range. The port is free when returned and bound by the emulator a moment
// later; in between, a port of the ephemeral range could be taken by any socket a test dials
// (each takes one from that range), and a busy machine did exactly that. Below the range only
// another FreePort, in a parallel test package, can take it: a chance of about one in the
// range's size.
func FreePort() (int, error) {
	from, to := portsOutsideEphemeral()
	var last error
	for range 50 {
		port := from + rand.IntN(to-from)
		l, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(port))
		if err != nil {
			last = err // in use: another
			continue
		}
		_ = l.Close()
		return port, nil
	}
	return 0, fmt.Errorf("no free loopback port in [%d, %d) after 50 tries: %w", from, to, last)
}

// portsOutsideEphemeral is the range [from, to) FreePort picks in: from minPort up to the
// kernel's ephemeral range, or, where that range starts too low to leave room below it, above
// it.
func portsOutsideEphemeral() (from, to int) {
	lo, hi := ephemeralRange()
	if lo-minPort >= 4096 || 65536-(hi+1) < 4096 {
		return minPort, max(lo, minPort+4096)
	}
	return hi + 1, 65536
}
