package cloudevent

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"mime"
	"time"

	"github.com/onceflow/onceflow/pkg/internal/ijson"
)

// MaxIDLength bounds the event id, in bytes: the id becomes part of a DynamoDB key and the SQS
// MessageDeduplicationId, which takes at most 128 ASCII characters (one byte each).
const MaxIDLength = 128

// Decode parses a message body. It checks the envelope only; the type's data is checked by the
// consumer that handles the type. It reads the attributes it knows by their exact names and
// ignores every other (an extension attribute a producer adds). A body that is not I-JSON
// (RFC 7493: UTF-8, no member twice in one object, no escaped lone surrogate) is malformed:
// decoding it would change what the producer sent, or pick one of two values.
func Decode(body []byte) (Event, error) {
	if len(bytes.TrimSpace(body)) == 0 {
		return Event{}, Malformed("body", "empty; want a CloudEvents 1.0 JSON object")
	}
	var attrs map[string]json.RawMessage
	if err := json.Unmarshal(body, &attrs); err != nil {
		return Event{}, Malformed("body", "not a CloudEvents JSON object: %v", err)
	}
	if err := wellFormed("", body); err != nil {
		return Event{}, err
	}
	var ev Event
	var err error
	for _, a := range []struct {
		name    string
		to      *string
		missing string // the problem when it is absent or empty; "" when it is optional
	}{
		{"specversion", &ev.SpecVersion, `missing; want "` + SpecVersion + `"`},
		{"id", &ev.ID, "missing; the publisher must set a stable event id"},
		{"source", &ev.Source, "missing"},
		{"type", &ev.Type, "missing"},
		{"subject", &ev.Subject, ""},
		{"datacontenttype", &ev.DataContentType, ""},
	} {
		if *a.to, err = text(attrs, a.name); err != nil {
			return Event{}, err
		}
		if *a.to == "" && a.missing != "" {
			return Event{}, Malformed(a.name, "%s", a.missing)
		}
		if err := checkAttribute(a.name, *a.to); err != nil {
			return Event{}, err
		}
	}
	if ev.Time, err = timeOf(attrs); err != nil {
		return Event{}, err
	}
	ev.Data = attrs["data"]
	return ev, nil
}

// text returns the string attribute name of attrs, "" when it is absent or null, and refuses
// a value that is not a string.
func text(attrs map[string]json.RawMessage, name string) (string, error) {
	raw, ok := attrs[name]
	switch {
	case !ok || string(raw) == "null":
		return "", nil
	case len(raw) < 2 || raw[0] != '"':
		return "", Malformed(name, "is a JSON %s; want a string", kind(raw))
	case bytes.IndexByte(raw, '\\') < 0:
		return string(raw[1 : len(raw)-1]), nil // no escape: the text as it is
	}
	var s string
	err := json.Unmarshal(raw, &s)
	return s, err // a string json.Unmarshal parsed already
}

// kind names the kind of the JSON value raw.
func kind(raw json.RawMessage) string {
	switch b := bytes.TrimSpace(raw); {
	case len(b) == 0:
		return "nothing"
	case b[0] == '{':
		return "object"
	case b[0] == '[':
		return "array"
	case b[0] == 't' || b[0] == 'f':
		return "boolean"
	}
	return "number"
}

// checkAttribute refuses a value the attribute name cannot take.
func checkAttribute(name, v string) error {
	switch {
	case name == "specversion" && v != SpecVersion:
		return Malformed("specversion", "is %q; want %q", v, SpecVersion)
	case name == "id" && len(v) > MaxIDLength:
		return Malformed("id", "is %d bytes; at most %d", len(v), MaxIDLength)
	case name == "datacontenttype" && v != "" && !isJSON(v):
		return Malformed("datacontenttype", "is %q; want application/json", v)
	}
	return nil
}

// isJSON reports whether the media type t is application/json, in any case and with any
// parameters ("application/json; charset=utf-8"; RFC 8259 defines none, and they change
// nothing), as RFC 9110 and CloudEvents allow.
func isJSON(t string) bool {
	if t == "application/json" {
		return true
	}
	mt, _, err := mime.ParseMediaType(t)
	return err == nil && mt == "application/json"
}

// timeOf returns the event's time attribute, the zero time when there is none.
func timeOf(attrs map[string]json.RawMessage) (time.Time, error) {
	s, err := text(attrs, "time")
	if err != nil || s == "" {
		return time.Time{}, err
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}, Malformed("time", "%q is not an RFC 3339 timestamp", s)
	}
	return t, nil
}

// DecodeData unmarshals the event's data into v and runs v.Validate when v has one. It is a
// tolerant reader: a field v does not know is ignored, so that a producer may add one. Data that
// is not I-JSON (see Decode) is malformed. Every failure is a MalformedError naming the field.
func DecodeData(ev Event, v any) error {
	if len(bytes.TrimSpace(ev.Data)) == 0 || string(bytes.TrimSpace(ev.Data)) == "null" {
		return Malformed("data", "missing; %s needs a JSON object", ev.Type)
	}
	if err := json.Unmarshal(ev.Data, v); err != nil {
		var typeErr *json.UnmarshalTypeError
		if errors.As(err, &typeErr) && typeErr.Field != "" {
			return Malformed("data."+typeErr.Field, "is a JSON %s; want %s", typeErr.Value, typeErr.Type)
		}
		return Malformed("data", "invalid for %s: %v", ev.Type, err)
	}
	if err := wellFormed("data", ev.Data); err != nil {
		return err
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

// wellFormed refuses the JSON text data, found at where ("" for a whole body), when it is not
// I-JSON: a MalformedError naming the field.
func wellFormed(where string, data []byte) error {
	var bad *ijson.Error
	if err := ijson.Check(data); errors.As(err, &bad) {
		return Malformed(cmp.Or(bad.In(where), "body"), "%s", bad.Problem)
	}
	return nil
}
