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

// MaxIDLength bounds the event id, which becomes part of a DynamoDB key and the SQS
// MessageDeduplicationId (128 characters at most).
const MaxIDLength = 128

// Decode parses a message body. It checks the envelope only; the type's data is checked by the
// consumer that handles the type.
func Decode(body []byte) (Event, error) {
	var raw struct {
		SpecVersion     *string         `json:"specversion"`
		ID              *string         `json:"id"`
		Source          *string         `json:"source"`
		Type            *string         `json:"type"`
		Subject         string          `json:"subject"`
		Time            string          `json:"time"`
		DataContentType string          `json:"datacontenttype"`
		Data            json.RawMessage `json:"data"`
	}
	if len(bytes.TrimSpace(body)) == 0 {
		return Event{}, Malformed("body", "empty; want a CloudEvents 1.0 JSON object")
	}
	if err := json.Unmarshal(body, &raw); err != nil {
		return Event{}, Malformed("body", "not a CloudEvents JSON object: %v", err)
	}
	ev := Event{Subject: raw.Subject, DataContentType: raw.DataContentType, Data: raw.Data}
	switch {
	case raw.SpecVersion == nil:
		return Event{}, Malformed("specversion", "missing; want %q", SpecVersion)
	case *raw.SpecVersion != SpecVersion:
		return Event{}, Malformed("specversion", "is %q; want %q", *raw.SpecVersion, SpecVersion)
	case raw.ID == nil || *raw.ID == "":
		return Event{}, Malformed("id", "missing; the publisher must set a stable event id")
	case len(*raw.ID) > MaxIDLength:
		return Event{}, Malformed("id", "is %d characters; at most %d", len(*raw.ID), MaxIDLength)
	case raw.Source == nil || *raw.Source == "":
		return Event{}, Malformed("source", "missing")
	case raw.Type == nil || *raw.Type == "":
		return Event{}, Malformed("type", "missing")
	}
	ev.SpecVersion, ev.ID, ev.Source, ev.Type = *raw.SpecVersion, *raw.ID, *raw.Source, *raw.Type
	if raw.Time != "" {
		t, err := time.Parse(time.RFC3339Nano, raw.Time)
		if err != nil {
			return Event{}, Malformed("time", "%q is not an RFC 3339 timestamp", raw.Time)
		}
		ev.Time = t
	}
	if ev.DataContentType != "" && ev.DataContentType != "application/json" {
		return Event{}, Malformed("datacontenttype", "is %q; want application/json", ev.DataContentType)
	}
	return ev, nil
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
// hash is a producer bug, not a duplicate; compare a stored hash with SamePayload, which also
// knows the hash of records written before canonical JSON.
func (ev Event) PayloadHash() string {
	canon, ok := Canonical(ev.Data)
	if !ok {
		canon = compacted(ev.Data)
	}
	return ev.hash(canon)
}

// LegacyPayloadHash is the payload hash as onceflow computed it before canonical JSON (the
// data compacted only, as written): records and items written then carry it.
func (ev Event) LegacyPayloadHash() string { return ev.hash(compacted(ev.Data)) }

// SamePayload reports whether hash, stored for an event of ev's id, is ev's payload hash:
// PayloadHash, or LegacyPayloadHash (a record written before canonical JSON). Accepting the
// legacy hash never makes two events one: data whose compacted form hashes as another's
// canonical form is that canonical form, so the two events are canonically equal anyway.
func (ev Event) SamePayload(hash string) bool {
	return hash == ev.PayloadHash() || hash == ev.LegacyPayloadHash()
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

// DecodeData unmarshals the event's data into v, rejecting unknown fields, and runs
// v.Validate when v has one. Every failure is a MalformedError naming the field.
func DecodeData(ev Event, v any) error {
	if len(bytes.TrimSpace(ev.Data)) == 0 || string(bytes.TrimSpace(ev.Data)) == "null" {
		return Malformed("data", "missing; %s needs a JSON object", ev.Type)
	}
	dec := json.NewDecoder(bytes.NewReader(ev.Data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		var typeErr *json.UnmarshalTypeError
		if errors.As(err, &typeErr) && typeErr.Field != "" {
			return Malformed("data."+typeErr.Field, "is a JSON %s; want %s", typeErr.Value, typeErr.Type)
		}
		return Malformed("data", "invalid for %s: %v", ev.Type, err)
	}
	if val, ok := v.(interface{ Validate() error }); ok {
		if err := val.Validate(); err != nil {
			if errors.Is(err, ErrMalformed) {
				return err
			}
			return Malformed("data", "%v", err)
		}
	}
	return nil
}
