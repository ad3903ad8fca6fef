package workload

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"io"
	"math/rand/v2"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/onceflow/onceflow/internal/ledger"
	"github.com/onceflow/onceflow/internal/notes"
)

// request is one logical API request of the workload, sent once or, when retry is set, twice.
type request struct {
	note  *sentNote
	move  *sentMove
	retry bool
}

// sentNote is a note the workload created, and what the API answered.
type sentNote struct {
	Key, Title, Content string
	ID                  string    // from the answer
	Mismatch            bool      // a retry answered another note
	AcceptedAt          time.Time // when the first answer arrived
}

// sentMove is a credit or debit the workload sent, and what the API answered.
type sentMove struct {
	Account, Type, Reference string // Type is ledger.Credited or ledger.Debited
	Amount                   int64
	EventID                  string // from the answer
	Mismatch                 bool   // a retry answered another event
	Accepted                 int64  // when the API first accepted it: a position in the run's answers
	AcceptedAt               time.Time
	Unanswered               bool // no attempt was answered 2xx: the API may have it or not
}

// traffic counts the HTTP requests of the workload.
type traffic struct {
	requests  atomic.Int64 // HTTP requests sent, every attempt
	retries   atomic.Int64 // deliberate retries: same Idempotency-Key or reference
	transient atomic.Int64 // attempts repeated after a 5xx or a network error
	done      atomic.Int64 // logical requests answered
	accepted  atomic.Int64 // movements accepted, the source of sentMove.Accepted
	failed    atomic.Int64 // logical requests that never got a 2xx
	mu        sync.Mutex
	status    map[int]int
}

var tagPool = []string{"go", "aws", "dynamodb", "sqs", "lambda", "fifo", "outbox", "ledger", "exactly_once", "idempotency"}

// plan builds the workload's requests in a random but reproducible order.
func plan(cfg Config) []request {
	rng := rand.New(rand.NewPCG(uint64(cfg.Seed), 0x0ce))
	var reqs []request
	for i := range cfg.Notes {
		var tags []string
		for _, j := range rng.Perm(len(tagPool))[:rng.IntN(4)] {
			tags = append(tags, "#"+tagPool[j])
		}
		n := &sentNote{Key: fmt.Sprintf("note-%d-%d", cfg.Seed, i), Title: fmt.Sprintf("Note %d", i),
			Content: fmt.Sprintf("Notes on %s, written by the workload.", strings.Join(tags, " "))}
		reqs = append(reqs, request{note: n, retry: rng.Float64() < cfg.RetryRate})
	}
	for i := range cfg.Movements {
		m := &sentMove{Account: fmt.Sprintf("acct-%03d", rng.IntN(cfg.Accounts)), Type: ledger.Credited,
			Reference: fmt.Sprintf("ref-%d-%d", cfg.Seed, i), Amount: 1 + rng.Int64N(100)}
		if rng.Float64() < 0.45 {
			m.Type = ledger.Debited
		}
		reqs = append(reqs, request{move: m, retry: rng.Float64() < cfg.RetryRate})
	}
	rng.Shuffle(len(reqs), func(i, j int) { reqs[i], reqs[j] = reqs[j], reqs[i] })
	return reqs
}

// drive sends every request through the API with cfg.Concurrency workers sharing client
// (which carries the workload's token). The movements of one account are all sent by one
// worker, each after the answer to the one before, so the order in which the API accepted
// them is defined.
func drive(ctx context.Context, client *http.Client, apiURL string, cfg Config, reqs []request, tr *traffic) {
	n := max(cfg.Concurrency, 1)
	work := make([]chan request, n)
	var wg sync.WaitGroup
	for i := range work {
		work[i] = make(chan request, 64)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for r := range work[i] {
				send(ctx, client, apiURL, r, tr)
				tr.done.Add(1)
			}
		}()
	}
	for i, r := range reqs {
		to := i % n
		if r.move != nil {
			h := fnv.New32a()
			_, _ = h.Write([]byte(r.move.Account))
			to = int(h.Sum32() % uint32(n))
		}
		select {
		case work[to] <- r:
		case <-ctx.Done():
		}
	}
	for _, w := range work {
		close(w)
	}
	wg.Wait()
}

func send(ctx context.Context, client *http.Client, apiURL string, r request, tr *traffic) {
	attempts := 1
	if r.retry {
		attempts = 2
	}
	for i := range attempts {
		if i > 0 {
			tr.retries.Add(1)
		}
		var ok bool
		if r.note != nil {
			ok = sendNote(ctx, client, apiURL, r.note, tr)
		} else {
			ok = sendMove(ctx, client, apiURL, r.move, tr)
		}
		if !ok && i == 0 {
			tr.failed.Add(1)
			if r.move != nil {
				// Unanswered, yet perhaps recorded: an attempt may have committed and lost its
				// answer. Its place in the account's order is now; resolveUnanswered reads
				// whether the API has it once the traffic is over.
				r.move.Accepted, r.move.AcceptedAt, r.move.Unanswered = tr.accepted.Add(1), time.Now(), true
			}
			return
		}
	}
}

func sendNote(ctx context.Context, client *http.Client, apiURL string, n *sentNote, tr *traffic) bool {
	var out struct {
		ID string `json:"id"`
	}
	body, _ := json.Marshal(map[string]string{"title": n.Title, "content": n.Content})
	if !post(ctx, client, apiURL+"/notes", n.Key, body, &out, tr) {
		return false
	}
	if n.ID != "" && n.ID != out.ID {
		n.Mismatch = true
	}
	if n.ID == "" {
		n.AcceptedAt = time.Now()
	}
	n.ID = out.ID
	return true
}

func sendMove(ctx context.Context, client *http.Client, apiURL string, m *sentMove, tr *traffic) bool {
	var out struct {
		EventID string `json:"eventId"`
	}
	path := "/credits"
	if m.Type == ledger.Debited {
		path = "/debits"
	}
	body, _ := json.Marshal(map[string]any{"amount": m.Amount, "reference": m.Reference})
	if !post(ctx, client, apiURL+"/accounts/"+m.Account+path, "", body, &out, tr) {
		return false
	}
	if m.EventID != "" && m.EventID != out.EventID {
		m.Mismatch = true
	}
	if m.EventID == "" {
		m.Accepted, m.AcceptedAt = tr.accepted.Add(1), time.Now()
	}
	m.EventID = out.EventID
	return true
}

// post sends one request, repeating it after a 5xx or a network error (at most 5 attempts),
// and decodes a 2xx answer into out.
func post(ctx context.Context, client *http.Client, url, key string, body []byte, out any, tr *traffic) bool {
	for attempt := range 5 {
		if attempt > 0 {
			tr.transient.Add(1)
			select {
			case <-ctx.Done():
				return false
			case <-time.After(time.Duration(50<<attempt) * time.Millisecond):
			}
		}
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
		if err != nil {
			return false
		}
		req.Header.Set("Content-Type", "application/json")
		if key != "" {
			req.Header.Set("Idempotency-Key", key)
		}
		tr.requests.Add(1)
		resp, err := client.Do(req)
		if err != nil {
			continue
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		tr.mu.Lock()
		tr.status[resp.StatusCode]++
		tr.mu.Unlock()
		switch {
		case resp.StatusCode >= 500:
			continue
		case resp.StatusCode >= 300:
			return false
		}
		return json.Unmarshal(b, out) == nil
	}
	return false
}

// noteEventID is the id of the note.created event of a note.
func noteEventID(noteID string) string { return notes.CreatedEventID(noteID) }
