package workload

import (
	"context"
	"io"
	"net/http"
	"time"
)

// readAttempts bounds the attempts of one read through retryReads.
const readAttempts = 6

// readAttemptBound bounds one attempt of a read: one that takes longer hangs. The API answers
// every request within its function's timeout and 5 s (a 500 when the invocation did not end),
// whatever the load, so an attempt's answer comes well before it.
const readAttemptBound = 2 * time.Minute

// retryReads is a transport that repeats a GET answered 5xx, failed on the network or not
// answered within its bound (readAttemptBound unless attempt is set), with a growing pause, as
// a client of the API would: under fault injection the API answers a read 5xx when its own
// DynamoDB calls failed past the SDK's retries. Other methods pass once. Each attempt has its
// own bound: a bound on the whole read (the client's 30 s Timeout once) ran out under load
// after one or two slow 500s, the retries never made.
type retryReads struct {
	next    http.RoundTripper
	attempt time.Duration
}

// RoundTrip implements http.RoundTripper.
func (t retryReads) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Method != http.MethodGet {
		return t.next.RoundTrip(req)
	}
	bound := t.attempt
	if bound == 0 {
		bound = readAttemptBound
	}
	for attempt := 1; ; attempt++ {
		ctx, cancel := context.WithTimeout(req.Context(), bound)
		resp, err := t.next.RoundTrip(req.WithContext(ctx))
		if attempt == readAttempts || (err == nil && resp.StatusCode < 500) || req.Context().Err() != nil {
			if err != nil {
				cancel()
				return resp, err
			}
			resp.Body = cancelOnClose{resp.Body, cancel}
			return resp, nil
		}
		if err == nil {
			resp.Body.Close()
		}
		cancel()
		select {
		case <-req.Context().Done():
			return nil, req.Context().Err()
		case <-time.After(time.Duration(attempt*attempt) * 50 * time.Millisecond):
		}
	}
}

// cancelOnClose ends an attempt's context once its answer's body is closed.
type cancelOnClose struct {
	io.ReadCloser
	cancel context.CancelFunc
}

func (b cancelOnClose) Close() error {
	defer b.cancel()
	return b.ReadCloser.Close()
}
