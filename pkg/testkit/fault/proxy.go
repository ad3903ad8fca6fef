package fault

import (
	"context"
	"errors"
	"net/http"
	"net/http/httputil"
	"net/url"
)

// reverseProxy forwards to target. A request its client gave up on (the test ended, a deadline
// passed) is answered 502 without a word on the test's output; any other forwarding error is
// answered 502 with the error in the body, where the client's error shows it.
func reverseProxy(target *url.URL) *httputil.ReverseProxy {
	p := httputil.NewSingleHostReverseProxy(target)
	p.ErrorHandler = func(w http.ResponseWriter, r *http.Request, err error) {
		if errors.Is(err, context.Canceled) || errors.Is(r.Context().Err(), context.Canceled) {
			w.WriteHeader(http.StatusBadGateway)
			return
		}
		http.Error(w, "test proxy: "+err.Error(), http.StatusBadGateway)
	}
	return p
}
