package workload

import (
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"time"
)

// Receiver is a webhook receiver on loopback that records every call: the note it is about and
// its Idempotency-Key. It answers 200 to every well-formed call. It is safe for concurrent use.
type Receiver struct {
	srv *http.Server
	url string
	log *slog.Logger

	mu    sync.Mutex
	calls int
	keys  map[string]map[string]int // note id → Idempotency-Key → calls
}

// NewReceiver starts a Receiver on a free loopback port; logger, when not nil, logs every call.
func NewReceiver(logger *slog.Logger) (*Receiver, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	r := &Receiver{url: "http://" + l.Addr().String() + "/notifications", log: logger, keys: map[string]map[string]int{}}
	r.srv = &http.Server{Handler: http.HandlerFunc(r.serve), ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = r.srv.Serve(l) }()
	return r, nil
}

// URL is where to post notifications.
func (r *Receiver) URL() string { return r.url }

// Close stops the receiver.
func (r *Receiver) Close() error { return r.srv.Close() }

func (r *Receiver) serve(w http.ResponseWriter, req *http.Request) {
	var body struct {
		NoteID string `json:"noteId"`
	}
	b, err := io.ReadAll(io.LimitReader(req.Body, 1<<20))
	if err != nil || json.Unmarshal(b, &body) != nil || body.NoteID == "" {
		http.Error(w, "want a JSON notification with noteId", http.StatusBadRequest)
		return
	}
	key := req.Header.Get("Idempotency-Key")
	r.mu.Lock()
	r.calls++
	if r.keys[body.NoteID] == nil {
		r.keys[body.NoteID] = map[string]int{}
	}
	r.keys[body.NoteID][key]++
	r.mu.Unlock()
	if r.log != nil {
		r.log.Info("webhook call", "noteId", body.NoteID, "idempotencyKey", key)
	}
	w.WriteHeader(http.StatusOK)
}

// Calls returns the number of calls and, per note id, the calls per Idempotency-Key.
func (r *Receiver) Calls() (int, map[string]map[string]int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make(map[string]map[string]int, len(r.keys))
	for note, keys := range r.keys {
		out[note] = make(map[string]int, len(keys))
		for k, n := range keys {
			out[note][k] = n
		}
	}
	return r.calls, out
}
