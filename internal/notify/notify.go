package notify

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"time"

	"github.com/onceflow/onceflow/pkg/cloudevent"
	"github.com/onceflow/onceflow/pkg/idempotency"
)

// NoteCreated is the event type the Notifier handles.
const NoteCreated = "note.created"

// DefaultTimeout bounds one webhook call.
const DefaultTimeout = 5 * time.Second

// Config configures a Notifier. URL is required; the zero value of every other field means
// its default.
type Config struct {
	URL     string        // the webhook, http or https
	Timeout time.Duration // per call; default DefaultTimeout
	Client  *http.Client  // default a client with no timeout of its own (Timeout applies)
}

// Validate reports every problem with c.
func (c Config) Validate() error {
	var errs []error
	if u, err := url.Parse(c.URL); c.URL == "" || err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		errs = append(errs, fmt.Errorf("webhook URL %q is not an absolute http(s) URL", c.URL))
	}
	if c.Timeout < 0 {
		errs = append(errs, fmt.Errorf("timeout %v is negative", c.Timeout))
	}
	return errors.Join(errs...)
}

// Notifier posts notifications to a webhook. It implements idempotency.SideEffect and is safe
// for concurrent use.
type Notifier struct {
	url     string
	timeout time.Duration
	client  *http.Client
}

// New returns a Notifier posting to cfg.URL.
func New(cfg Config) (*Notifier, error) {
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("notify config: %w", err)
	}
	if cfg.Timeout == 0 {
		cfg.Timeout = DefaultTimeout
	}
	if cfg.Client == nil {
		cfg.Client = &http.Client{}
	}
	return &Notifier{url: cfg.URL, timeout: cfg.Timeout, client: cfg.Client}, nil
}

// Notification is the JSON body posted for a note.created event.
type Notification struct {
	Type       string    `json:"type"`    // the event type, note.created
	EventID    string    `json:"eventId"` // the stable event id
	NoteID     string    `json:"noteId"`
	Title      string    `json:"title"`
	OccurredAt time.Time `json:"occurredAt,omitzero"`
}

// IdempotencyKey derives the Idempotency-Key header from the engine's idempotency key (consumer
// name and event id): its hex SHA-256, of fixed length, safe in a header whatever the event id
// holds, and revealing nothing of how keys are made.
func IdempotencyKey(key string) string {
	sum := sha256.Sum256([]byte(key))
	return hex.EncodeToString(sum[:])
}

// Run posts the notification of ev with the Idempotency-Key derived from key. An event of
// another type or without a note id is malformed; a network error, a timeout, a 5xx, 408 or
// 429 is transient; any other non-2xx answer is a StatusError marked idempotency.Permanent.
func (n *Notifier) Run(ctx context.Context, ev cloudevent.Event, key string) error {
	note, err := notification(ev)
	if err != nil {
		return err
	}
	body, err := json.Marshal(note)
	if err != nil {
		return fmt.Errorf("encode notification of %s: %w", ev.ID, err)
	}
	ctx, cancel := context.WithTimeout(ctx, n.timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, n.url, bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("build webhook request: %w", err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Idempotency-Key", IdempotencyKey(key))
	resp, err := n.client.Do(req)
	if err != nil {
		return fmt.Errorf("post notification of %s: %w", ev.ID, err)
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10)) // lets the connection be reused
	if resp.StatusCode/100 == 2 {
		return nil
	}
	err = &StatusError{EventID: ev.ID, StatusCode: resp.StatusCode}
	if !retryable(resp.StatusCode) {
		// Resending cannot help: the message is dead-lettered, to be redriven once the
		// receiver is fixed.
		return idempotency.Permanent(err)
	}
	return err
}

// notification reads a note.created event leniently (fields it does not use are ignored: the
// notifier must not dead-letter notes because the notes domain grew a field).
func notification(ev cloudevent.Event) (Notification, error) {
	if ev.Type != NoteCreated {
		return Notification{}, cloudevent.Malformed("type", "%q is not handled by the notifier; it handles %s", ev.Type, NoteCreated)
	}
	var data struct {
		NoteID string `json:"noteId"`
		Title  string `json:"title"`
	}
	if err := json.Unmarshal(ev.Data, &data); err != nil {
		return Notification{}, cloudevent.Malformed("data", "invalid for %s: %v", ev.Type, err)
	}
	if data.NoteID == "" {
		return Notification{}, cloudevent.Malformed("data.noteId", "missing")
	}
	return Notification{Type: ev.Type, EventID: ev.ID, NoteID: data.NoteID, Title: data.Title, OccurredAt: ev.Time}, nil
}

// StatusError is a webhook's non-2xx answer.
type StatusError struct {
	EventID    string
	StatusCode int
}

func (e *StatusError) Error() string {
	return fmt.Sprintf("webhook refused the notification of %s: %d %s", e.EventID, e.StatusCode, http.StatusText(e.StatusCode))
}

// retryable reports whether a webhook's answer may change on a resend: anything but a 4xx
// other than 408 (timeout) and 429 (too many requests).
func retryable(code int) bool {
	return code < 400 || code >= 500 || code == http.StatusRequestTimeout || code == http.StatusTooManyRequests
}
