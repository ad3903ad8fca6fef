package webhooktest

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"io"
	"net"
	"net/http"
	"sync"
	"time"
)

// Call is one request the Receiver answered.
type Call struct {
	Method string
	Header http.Header
	Body   []byte // at most 1 MiB
	Status int    // the status answered; 0 while the call is being answered
	// SignatureError says why the call's signature was refused (answered 401 without asking
	// Respond); "" when it was valid.
	SignatureError string
}

// Key returns the call's Idempotency-Key header.
func (c Call) Key() string { return c.Header.Get("Idempotency-Key") }

// Receiver is an HTTP server on 127.0.0.1 that records every call, whatever its path, checks
// its signature (a call without a valid one is answered 401), and answers 200 unless told
// otherwise by Answer or Respond. It is safe for concurrent use.
type Receiver struct {
	// URL is the receiver's base URL, http://127.0.0.1:port with no path.
	URL string
	// Secret is the signing secret the receiver checks calls with: 64 random hex characters,
	// made at start.
	Secret string

	srv     *http.Server
	mu      sync.Mutex
	calls   []Call
	respond func(Call) int
}

// NewReceiver starts a Receiver on a free loopback port.
func NewReceiver() (*Receiver, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	secret := make([]byte, 32)
	if _, err := rand.Read(secret); err != nil {
		return nil, errors.Join(err, l.Close())
	}
	r := &Receiver{URL: "http://" + l.Addr().String(), Secret: hex.EncodeToString(secret)}
	r.Answer(http.StatusOK)
	r.srv = &http.Server{Handler: http.HandlerFunc(r.serve), ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = r.srv.Serve(l) }()
	return r, nil
}

// T is the part of testing.TB that Start uses.
type T interface {
	Helper()
	Fatalf(format string, args ...any)
	Cleanup(func())
}

// Start starts a Receiver for the test t, failing it when the receiver cannot start, and closes
// the receiver when t ends.
func Start(t T) *Receiver {
	t.Helper()
	r, err := NewReceiver()
	if err != nil {
		t.Fatalf("start a webhook receiver: %v", err)
	}
	t.Cleanup(func() { _ = r.Close() })
	return r
}

// Close stops the receiver and closes its connections, without waiting for calls being answered.
func (r *Receiver) Close() error { return r.srv.Close() }

// Answer makes the receiver answer status to every later call.
func (r *Receiver) Answer(status int) {
	r.Respond(func(Call) int { return status })
}

// Respond makes the receiver answer every later call with the status f returns for it. f is
// called concurrently, after the call is recorded; it may block to delay the answer.
func (r *Receiver) Respond(f func(Call) int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.respond = f
}

// Calls returns every call so far, in the order they arrived, including those still being
// answered. The calls share their headers and bodies with the receiver: do not modify them.
func (r *Receiver) Calls() []Call {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Call(nil), r.calls...)
}

// Keys returns the Idempotency-Key of every call so far, in the order they arrived.
func (r *Receiver) Keys() []string {
	var keys []string
	for _, c := range r.Calls() {
		keys = append(keys, c.Key())
	}
	return keys
}

func (r *Receiver) serve(w http.ResponseWriter, req *http.Request) {
	body, _ := io.ReadAll(io.LimitReader(req.Body, 1<<20))
	c := Call{Method: req.Method, Header: req.Header.Clone(), Body: body}
	if err := verify([]byte(r.Secret), req.Header, body, time.Now()); err != nil {
		c.SignatureError, c.Status = err.Error(), http.StatusUnauthorized
	}
	r.mu.Lock()
	i := len(r.calls)
	r.calls = append(r.calls, c)
	respond := r.respond
	r.mu.Unlock()

	if c.SignatureError != "" {
		w.WriteHeader(c.Status)
		return
	}
	status := respond(c)
	r.mu.Lock()
	r.calls[i].Status = status
	r.mu.Unlock()
	w.WriteHeader(status)
}
