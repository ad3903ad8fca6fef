package fault

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"
	"time"
)

// LatencyProxy starts an HTTP proxy in front of target (an emulator's URL) that holds every
// request for delay before forwarding it: each round trip through it takes delay longer, as
// one to a service in another building would. It stops when the test ends; its URL is
// returned. A zero delay returns target itself.
func LatencyProxy(tb testing.TB, target string, delay time.Duration) string {
	tb.Helper()
	if delay <= 0 {
		return target
	}
	u, err := url.Parse(target)
	if err != nil {
		tb.Fatalf("latency proxy target %q: %v", target, err)
	}
	proxy := reverseProxy(u)
	base := http.DefaultTransport.(*http.Transport).Clone()
	base.MaxIdleConnsPerHost = 256
	proxy.Transport = delayed{next: base, delay: delay}
	srv := httptest.NewServer(proxy)
	tb.Cleanup(srv.Close)
	return srv.URL
}

// delayed is a RoundTripper that waits before each request.
type delayed struct {
	next  http.RoundTripper
	delay time.Duration
}

func (d delayed) RoundTrip(r *http.Request) (*http.Response, error) {
	t := time.NewTimer(d.delay)
	defer t.Stop()
	select {
	case <-r.Context().Done():
		return nil, r.Context().Err()
	case <-t.C:
	}
	return d.next.RoundTrip(r)
}
