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
	"net"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/onceflow/onceflow/pkg/cloudevent"
	"github.com/onceflow/onceflow/pkg/idempotency"
)

// NoteCreated is the event type the Notifier handles.
const NoteCreated = "note.created"

// DefaultTimeout bounds one webhook call.
const DefaultTimeout = 5 * time.Second

// Config configures a Notifier. URL and Secret are required; the zero value of every other
// field means its default.
type Config struct {
	// URL is the webhook: https, or http to a loopback host (the local cloud's receiver). It
	// is treated as a secret: no error or log line of this package contains it.
	URL string
	// Secret is the HMAC-SHA256 signing key, at least MinSecretLength bytes (see Sign).
	Secret  string
	Timeout time.Duration    // per call; default DefaultTimeout
	Client  *http.Client     // default a client with no timeout of its own (Timeout applies); redirects are refused whatever it says
	Now     func() time.Time // the clock of the signature's timestamp; default time.Now
}

// MinSecretLength is the shortest signing secret accepted, in bytes.
const MinSecretLength = 32

// Validate reports every problem with c, without quoting the URL.
func (c Config) Validate() error {
	var errs []error
	if err := checkURL(c.URL); err != nil {
		errs = append(errs, err)
	}
	if len(c.Secret) < MinSecretLength {
		errs = append(errs, fmt.Errorf("signing secret is %d bytes; want at least %d", len(c.Secret), MinSecretLength))
	}
	if c.Timeout < 0 {
		errs = append(errs, fmt.Errorf("timeout %v is negative", c.Timeout))
	}
	return errors.Join(errs...)
}

// checkURL accepts an absolute https URL, or an http URL whose host is loopback: a webhook
// call carries the note and its signature, and leaves the machine only encrypted.
func checkURL(s string) error {
	u, err := url.Parse(s)
	switch {
	case s == "" || err != nil || u.Host == "":
		return errors.New("webhook URL is not an absolute URL")
	case u.Scheme == "https":
		return nil
	case u.Scheme == "http" && loopback(u.Hostname()):
		return nil
	}
	return errors.New("webhook URL must be https (http only to a loopback host)")
}

func loopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// Notifier posts signed notifications to a webhook. It implements lease.SideEffect and
// is safe for concurrent use.
type Notifier struct {
	url     string
	secret  []byte
	timeout time.Duration
	client  *http.Client
	now     func() time.Time
}

// New returns a Notifier posting to cfg.URL.
func New(cfg Config) (*Notifier, error) {
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("notify config: %w", err)
	}
	if cfg.Timeout == 0 {
		cfg.Timeout = DefaultTimeout
	}
	client := http.Client{}
	if cfg.Client != nil {
		client = *cfg.Client
	}
	client.CheckRedirect = refuseRedirects
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	return &Notifier{url: cfg.URL, secret: []byte(cfg.Secret), timeout: cfg.Timeout, client: &client, now: cfg.Now}, nil
}

// refuseRedirects makes the client return a redirect as the answer, never following it: the
// body, its signature and its key go to the configured URL only.
func refuseRedirects(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }

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

// Run posts the notification of ev, signed (see Sign), with the Idempotency-Key derived from
// key. An event of another type or without a note id is malformed; a network error, a
// timeout, a 5xx, 408 or 429 is transient; any other non-2xx answer, a redirect included, is a
// StatusError marked idempotency.Permanent. No error contains the URL.
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
		return fmt.Errorf("build webhook request: %w", n.redact(err))
	}
	ts := strconv.FormatInt(n.now().Unix(), 10)
	req.Header.Set("Content-Type", "application/json")
	idemKey := IdempotencyKey(key)
	req.Header.Set(IdempotencyKeyHeader, idemKey)
	req.Header.Set(TimestampHeader, ts)
	req.Header.Set(SignatureHeader, Sign(n.secret, ts, idemKey, body))
	resp, err := n.client.Do(req)
	if err != nil {
		return fmt.Errorf("post notification of %s: %w", ev.ID, n.redact(err))
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10)) // lets the connection be reused
	if resp.StatusCode/100 == 2 {
		return nil
	}
	err = &StatusError{EventID: ev.ID, StatusCode: resp.StatusCode}
	if !retryable(resp.StatusCode) {
		// Resending cannot help: the message is dead-lettered, to be redriven once the
		// receiver (or the configured URL) is fixed.
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

// retryable reports whether a webhook's non-2xx answer may change on a resend: a 5xx, 408
// (timeout) or 429 (too many requests). A redirect is not followed and not retried: the URL is
// to be fixed.
func retryable(code int) bool {
	return code >= 500 || code == http.StatusRequestTimeout || code == http.StatusTooManyRequests
}
