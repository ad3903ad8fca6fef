package envelope

import (
	"bytes"
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/onceflow/onceflow/pkg/cloudevent"
	"github.com/onceflow/onceflow/pkg/internal/ijson"
)

// parse decodes a JSON payload for field lookups, keeping numbers as written. A payload that is
// not I-JSON (not UTF-8, a member twice) is malformed, as cloudevent.Decode has it.
func parse(where string, data []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, cloudevent.Malformed(where, "not JSON: %v", err)
	}
	if err := wellFormed(where, data); err != nil {
		return nil, err
	}
	return v, nil
}

// wellFormed refuses the JSON text data, found at where ("" for a whole body), when it is not
// I-JSON: decoded, it would not be what the producer sent, or one of two values.
func wellFormed(where string, data []byte) error {
	var bad *ijson.Error
	if errors.As(ijson.Check(data), &bad) {
		return cloudevent.Malformed(cmp.Or(bad.In(where), "body"), "%s", bad.Problem)
	}
	return nil
}

// canonical renders a parsed payload with its object keys sorted, numbers as written and no
// insignificant space: the event's data. Numbers keep their digits, so that a handler reads an
// integer past 2^53 as it was sent; the payload hash canonicalises further (RFC 8785:
// cloudevent.Event.PayloadHash), so that 10 and 10.0 are one payload.
func canonical(v any) (json.RawMessage, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, fmt.Errorf("canonical json: %w", err)
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

// lookup returns the value at a dotted path ("order.id"; a number indexes an array).
func lookup(v any, path string) (any, bool) {
	for seg := range strings.SplitSeq(path, ".") {
		switch x := v.(type) {
		case map[string]any:
			var ok bool
			if v, ok = x[seg]; !ok {
				return nil, false
			}
		case []any:
			i, err := strconv.Atoi(seg)
			if err != nil || i < 0 || i >= len(x) {
				return nil, false
			}
			v = x[i]
		default:
			return nil, false
		}
	}
	return v, true
}

// scalar returns the value at path as text: a string, a number as RFC 8785 writes its value
// (10 and 10.0 are "10": one key, whichever producer wrote it; a number a double does not hold
// exactly keeps its digits as written), or a boolean.
func scalar(v any, where, path string) (string, error) {
	field := where + "." + path
	x, ok := lookup(v, path)
	if !ok || x == nil {
		return "", cloudevent.Malformed(field, "missing")
	}
	var s string
	switch x := x.(type) {
	case string:
		s = x
	case json.Number:
		s, _ = cloudevent.CanonicalNumber(x.String())
	case bool:
		s = strconv.FormatBool(x)
	default:
		return "", cloudevent.Malformed(field, "is a JSON %T; want a string or a number", x)
	}
	if s == "" {
		return "", cloudevent.Malformed(field, "is empty")
	}
	return s, nil
}

// key joins the parts of a key: one part as it is, several escaped and joined by "/", so that
// ("a/b", "c") and ("a", "b/c") differ. A key longer than cloudevent.MaxIDLength becomes
// "sha256:" and the hex digest of the joined parts, which is as stable and as unique.
func key(parts ...string) string {
	k := parts[0]
	if len(parts) > 1 {
		esc := make([]string, len(parts))
		for i, p := range parts {
			esc[i] = url.PathEscape(p)
		}
		k = strings.Join(esc, "/")
	}
	if len(k) <= cloudevent.MaxIDLength {
		return k
	}
	sum := sha256.Sum256([]byte(k))
	return "sha256:" + hex.EncodeToString(sum[:])
}

// fields picks the key, type, group and time of an event out of a JSON payload, by the dotted
// paths its user named.
type fields struct {
	key                           []string
	typeField, groupField, timeAt string
}

// picked is what fields found; an empty string is a field not named.
type picked struct {
	key, typ, group string
	time            time.Time
}

func (f fields) pick(where string, v any) (picked, error) {
	var p picked
	parts := make([]string, len(f.key))
	for i, path := range f.key {
		s, err := scalar(v, where, path)
		if err != nil {
			return picked{}, err
		}
		parts[i] = s
	}
	p.key = key(parts...)
	var err error
	if f.typeField != "" {
		if p.typ, err = scalar(v, where, f.typeField); err != nil {
			return picked{}, err
		}
	}
	if f.groupField != "" {
		if p.group, err = scalar(v, where, f.groupField); err != nil {
			return picked{}, err
		}
	}
	if f.timeAt != "" {
		s, err := scalar(v, where, f.timeAt)
		if err != nil {
			return picked{}, err
		}
		if p.time, err = time.Parse(time.RFC3339Nano, s); err != nil {
			return picked{}, cloudevent.Malformed(where+"."+f.timeAt, "%q is not an RFC 3339 timestamp", s)
		}
	}
	return p, nil
}

// validate reports a decoder configured without a key, saying why the key must come from the
// payload.
func (f fields) validate(decoder, transportID string) error {
	if len(f.key) == 0 {
		return fmt.Errorf("envelope: %s.Key is empty: name the payload fields that identify the logical event "+
			"(%s is new on every publish call, so a publisher's retry would be applied again)", decoder, transportID)
	}
	for _, p := range f.key {
		if p == "" {
			return fmt.Errorf("envelope: %s.Key has an empty field name", decoder)
		}
	}
	return nil
}
