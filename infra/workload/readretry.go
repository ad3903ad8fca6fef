package workload

import (
	"net/http"
	"time"
)

// readAttempts bounds the attempts of one read through retryReads.
const readAttempts = 6

// retryReads is a transport that repeats a GET answered 5xx or failed on the network, with a
// growing pause, as a client of the API would: under fault injection the API answers a read
// 5xx when its own DynamoDB calls failed past the SDK's retries. Other methods pass once.
type retryReads struct{ next http.RoundTripper }

// RoundTrip implements http.RoundTripper.
func (t retryReads) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Method != http.MethodGet {
		return t.next.RoundTrip(req)
	}
	for attempt := 1; ; attempt++ {
		resp, err := t.next.RoundTrip(req)
		if attempt == readAttempts || (err == nil && resp.StatusCode < 500) || req.Context().Err() != nil {
			return resp, err
		}
		if err == nil {
			resp.Body.Close()
		}
		select {
		case <-req.Context().Done():
			return nil, req.Context().Err()
		case <-time.After(time.Duration(attempt*attempt) * 50 * time.Millisecond):
		}
	}
}
