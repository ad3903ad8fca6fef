package cloudevent

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// SpecVersion is the only CloudEvents version this package accepts.
const SpecVersion = "1.0"

// ErrMalformed is matched by every error that means a message can never be processed as sent:
// retrying it changes nothing, so it belongs in a dead-letter queue with the reason.
var ErrMalformed = errors.New("malformed message")

// MalformedError says which field of a message is wrong and how.
type MalformedError struct {
	Field   string // "id", "type", "data.amount", or "body" for the whole message
	Problem string
}

func (e *MalformedError) Error() string {
	return fmt.Sprintf("malformed message: %s: %s", e.Field, e.Problem)
}

// Is makes errors.Is(err, ErrMalformed) true for every MalformedError.
func (e *MalformedError) Is(target error) bool { return target == ErrMalformed }

// Permanent reports true: a malformed message fails the same way on every delivery, so it is
// dead-lettered rather than retried (idempotency.IsPermanent is the engine's one test).
func (e *MalformedError) Permanent() bool { return true }

// Malformed returns a MalformedError for field.
func Malformed(field, problem string, args ...any) error {
	return &MalformedError{Field: field, Problem: fmt.Sprintf(problem, args...)}
}

// Event is a decoded CloudEvent. ID is the stable id of the logical event (the publisher's
// MessageDeduplicationId); Subject is the aggregate it concerns (the MessageGroupId).
type Event struct {
	SpecVersion     string          `json:"specversion"`
	ID              string          `json:"id"`
	Source          string          `json:"source"`
	Type            string          `json:"type"`
	Subject         string          `json:"subject,omitempty"`
	Time            time.Time       `json:"time,omitzero"`
	DataContentType string          `json:"datacontenttype,omitempty"`
	Data            json.RawMessage `json:"data,omitempty"`
}

// Encode renders ev as a structured-mode JSON body, filling specversion and datacontenttype.
func Encode(ev Event) ([]byte, error) {
	if ev.SpecVersion == "" {
		ev.SpecVersion = SpecVersion
	}
	if ev.DataContentType == "" && len(ev.Data) > 0 {
		ev.DataContentType = "application/json"
	}
	body, err := json.Marshal(ev)
	if err != nil {
		return nil, fmt.Errorf("encode event %s: %w", ev.ID, err)
	}
	return body, nil
}

// New builds an event whose data is v encoded as JSON.
func New(id, source, typ, subject string, at time.Time, v any) (Event, error) {
	data, err := json.Marshal(v)
	if err != nil {
		return Event{}, fmt.Errorf("encode %s data: %w", typ, err)
	}
	return Event{SpecVersion: SpecVersion, ID: id, Source: source, Type: typ, Subject: subject,
		Time: at.UTC(), DataContentType: "application/json", Data: data}, nil
}

// PayloadHash is the hex SHA-256 of what makes two sends the same event: type, source,
// subject and data, the data in canonical JSON (Canonical: RFC 8785), so that neither
// whitespace, member order, escapes nor how a number is written ({"n":10} and {"n":10.0})
// matter. Data without a canonical form (not JSON, or a number a double does not hold as
// written) is hashed as written, compacted. A second event with the same id and a different
// hash is a producer bug, not a duplicate.
func (ev Event) PayloadHash() string {
	canon, ok := Canonical(ev.Data)
	if !ok {
		canon = compacted(ev.Data)
	}
	return ev.hash(canon)
}

func (ev Event) hash(data []byte) string {
	h := sha256.New()
	for _, s := range []string{ev.Type, ev.Source, ev.Subject} {
		h.Write([]byte(s))
		h.Write([]byte{0})
	}
	h.Write(data)
	return hex.EncodeToString(h.Sum(nil))
}

// compacted is data without insignificant space, or as it is when it is not JSON.
func compacted(data []byte) []byte {
	var b bytes.Buffer
	if err := json.Compact(&b, data); err != nil {
		return data
	}
	return b.Bytes()
}
