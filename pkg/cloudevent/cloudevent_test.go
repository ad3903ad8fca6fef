package cloudevent_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/onceflow/onceflow/pkg/cloudevent"
)

func TestDecode_reports_the_field_that_is_wrong(t *testing.T) {
	cases := []struct {
		name, body, field string
	}{
		{"empty", ``, "body"},
		{"not json", `hello`, "body"},
		{"array", `[1]`, "body"},
		{"no specversion", `{"id":"1","source":"s","type":"t"}`, "specversion"},
		{"old specversion", `{"specversion":"0.3","id":"1","source":"s","type":"t"}`, "specversion"},
		{"no id", `{"specversion":"1.0","source":"s","type":"t"}`, "id"},
		{"empty id", `{"specversion":"1.0","id":"","source":"s","type":"t"}`, "id"},
		{"long id", `{"specversion":"1.0","id":"` + strings.Repeat("x", 129) + `","source":"s","type":"t"}`, "id"},
		{"no source", `{"specversion":"1.0","id":"1","type":"t"}`, "source"},
		{"no type", `{"specversion":"1.0","id":"1","source":"s"}`, "type"},
		{"bad time", `{"specversion":"1.0","id":"1","source":"s","type":"t","time":"yesterday"}`, "time"},
		{"xml data", `{"specversion":"1.0","id":"1","source":"s","type":"t","datacontenttype":"application/xml"}`, "datacontenttype"},
		{"two media types", `{"specversion":"1.0","id":"1","source":"s","type":"t","datacontenttype":"application/json, text/plain"}`, "datacontenttype"},
		{"a broken parameter", `{"specversion":"1.0","id":"1","source":"s","type":"t","datacontenttype":"application/json; charset"}`, "datacontenttype"},
		{"an id not a string", `{"specversion":"1.0","id":7,"source":"s","type":"t"}`, "id"},
		{"an id not UTF-8", "{\"specversion\":\"1.0\",\"id\":\"a\xff\",\"source\":\"s\",\"type\":\"t\"}", "id"},
		{"an id with a lone surrogate", `{"specversion":"1.0","id":"a\ud800","source":"s","type":"t"}`, "id"},
		{"an id twice", `{"specversion":"1.0","id":"1","source":"s","type":"t","id":"2"}`, "id"},
		{"a data member twice", `{"specversion":"1.0","id":"1","source":"s","type":"t","data":{"a":1,"b":{"c":1,"c":2}}}`, "data.b.c"},
		{"an upper-case ID only", `{"specversion":"1.0","ID":"1","source":"s","type":"t"}`, "id"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := cloudevent.Decode([]byte(tc.body))
			var me *cloudevent.MalformedError
			if !errors.As(err, &me) || !errors.Is(err, cloudevent.ErrMalformed) {
				t.Fatalf("Decode = %v, want a MalformedError", err)
			}
			if me.Field != tc.field {
				t.Errorf("field = %q (%v), want %q", me.Field, err, tc.field)
			}
		})
	}
}

// A bound's error names the unit it counts: the id's bound counts bytes.
func TestDecode_says_the_ids_bound_in_bytes(t *testing.T) {
	id := strings.Repeat("é", 65) // 65 characters, 130 bytes
	_, err := cloudevent.Decode([]byte(`{"specversion":"1.0","id":"` + id + `","source":"s","type":"t"}`))
	if err == nil || err.Error() != "malformed message: id: is 130 bytes; at most 128" {
		t.Errorf("Decode = %v; want the id's length in bytes", err)
	}
}

// What a later version of a producer may add is read: an extension attribute is ignored, a
// datacontenttype with parameters or in another case is JSON.
func TestDecode_reads_what_a_later_producer_adds(t *testing.T) {
	for _, tc := range []struct{ name, attrs string }{
		{"an extension attribute", `"traceparent":"00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01","partitionkey":"o1"`},
		{"an extension attribute of any JSON value", `"ext":{"a":[1,2]}`},
		{"a charset parameter", `"datacontenttype":"application/json; charset=utf-8"`},
		{"a media type in capitals", `"datacontenttype":"Application/JSON;Charset=UTF-8"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ev, err := cloudevent.Decode([]byte(`{"specversion":"1.0","id":"1","source":"s","type":"t",` + tc.attrs + `,"data":{"a":1}}`))
			if err != nil || ev.ID != "1" || string(ev.Data) != `{"a":1}` {
				t.Errorf("Decode = %+v, %v; want the event", ev, err)
			}
		})
	}
}

// The payload hash is of the data as sent, whatever a tolerant reader of it ignores: the same
// event id with a field added is another payload (a conflict), and an extension attribute,
// which is not payload, changes nothing.
func TestPayloadHash_sees_a_field_a_reader_ignores_and_no_extension_attribute(t *testing.T) {
	decode := func(body string) cloudevent.Event {
		t.Helper()
		ev, err := cloudevent.Decode([]byte(body))
		if err != nil {
			t.Fatal(err)
		}
		return ev
	}
	v1 := decode(`{"specversion":"1.0","id":"o1","source":"s","type":"order.placed","data":{"total":5}}`)
	v2 := decode(`{"specversion":"1.0","id":"o1","source":"s","type":"order.placed","data":{"total":5,"coupon":"X"}}`)
	traced := decode(`{"specversion":"1.0","id":"o1","source":"s","type":"order.placed","traceparent":"00-1-2-01","data":{"total":5}}`)
	var a, b struct{ Total int }
	if cloudevent.DecodeData(v1, &a) != nil || cloudevent.DecodeData(v2, &b) != nil || a != b {
		t.Fatalf("the tolerant reader read %+v and %+v; want one value", a, b)
	}
	if v1.PayloadHash() == v2.PayloadHash() {
		t.Error("data with a field added hashes as the data without it")
	}
	if v1.PayloadHash() != traced.PayloadHash() {
		t.Error("an extension attribute changed the payload hash")
	}
}

func TestEncode_then_Decode_round_trips(t *testing.T) {
	at := time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC)
	ev, err := cloudevent.New("ev-1", "notes-api", "note.created", "note-1", at, map[string]string{"title": "hi"})
	if err != nil {
		t.Fatal(err)
	}
	body, err := cloudevent.Encode(ev)
	if err != nil {
		t.Fatal(err)
	}
	got, err := cloudevent.Decode(body)
	if err != nil {
		t.Fatal(err)
	}
	if got.ID != "ev-1" || got.Type != "note.created" || got.Subject != "note-1" || !got.Time.Equal(at) ||
		got.DataContentType != "application/json" || string(got.Data) != `{"title":"hi"}` {
		t.Errorf("round trip = %+v", got)
	}
	if got.PayloadHash() != ev.PayloadHash() {
		t.Error("payload hash changed in a round trip")
	}
}

func TestPayloadHash_ignores_whitespace_and_sees_data_changes(t *testing.T) {
	a := cloudevent.Event{ID: "1", Type: "t", Source: "s", Data: []byte(`{"a": 1}`)}
	b := cloudevent.Event{ID: "1", Type: "t", Source: "s", Data: []byte(`{"a":1}`)}
	c := cloudevent.Event{ID: "1", Type: "t", Source: "s", Data: []byte(`{"a":2}`)}
	d := cloudevent.Event{ID: "1", Type: "u", Source: "s", Data: []byte(`{"a":1}`)}
	if a.PayloadHash() != b.PayloadHash() {
		t.Error("whitespace changed the hash")
	}
	if a.PayloadHash() == c.PayloadHash() || a.PayloadHash() == d.PayloadHash() {
		t.Error("different data or type gave the same hash")
	}
}

func TestDecodeData_names_the_field(t *testing.T) {
	type data struct {
		Amount int `json:"amount"`
	}
	cases := []struct{ name, data, field string }{
		{"missing", ``, "data"},
		{"null", `null`, "data"},
		{"wrong type", `{"amount":"ten"}`, "data.amount"},
		{"a member twice", `{"amount":1,"amount":2}`, "data.amount"},
		{"not UTF-8", "{\"amount\":1,\"note\":\"\xc3\"}", "data.note"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var d data
			err := cloudevent.DecodeData(cloudevent.Event{Type: "t", Data: []byte(tc.data)}, &d)
			var me *cloudevent.MalformedError
			if !errors.As(err, &me) || me.Field != tc.field {
				t.Fatalf("DecodeData = %v, want field %q", err, tc.field)
			}
		})
	}
}

func TestDecodeData_ignores_a_field_it_does_not_know(t *testing.T) {
	var d struct{ Amount int }
	if err := cloudevent.DecodeData(cloudevent.Event{Type: "t", Data: []byte(`{"amount":1,"x":{"y":2}}`)}, &d); err != nil || d.Amount != 1 {
		t.Errorf("DecodeData = %v, %+v; want amount 1 and x ignored", err, d)
	}
}

// The fuzz target holds Decode to its invariants: every error is malformed; an event it
// accepts has an id, a type and a source, an id within its bound, and came from a body that
// is valid UTF-8 with no member twice in one object (checked here independently, by
// encoding/json's tokens).
func FuzzDecode(f *testing.F) {
	f.Add([]byte(`{"specversion":"1.0","id":"1","source":"s","type":"t","time":"2026-11-30T10:00:00Z","data":{"a":1}}`))
	f.Add([]byte(`{"specversion":"1.0","id":"","source":"s"}`))
	f.Add([]byte(`{"id":null,"data":[}`))
	f.Add([]byte(``))
	f.Add([]byte(`{"specversion":"1.0","id":"1","source":"s","type":"t","id":"2"}`))
	f.Add([]byte("{\"specversion\":\"1.0\",\"id\":\"\xff\",\"source\":\"s\",\"type\":\"t\",\"data\":{\"a\":{\"b\":1,\"b\":2}}}"))
	f.Add([]byte(`{"specversion":"1.0","id":"\ud800\udc00","source":"s","type":"t","datacontenttype":"application/json; charset=utf-8"}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		ev, err := cloudevent.Decode(body)
		if err != nil {
			if !errors.Is(err, cloudevent.ErrMalformed) {
				t.Fatalf("Decode error %v is not ErrMalformed", err)
			}
			return
		}
		if ev.ID == "" || ev.Type == "" || ev.Source == "" || len(ev.ID) > cloudevent.MaxIDLength {
			t.Fatalf("Decode accepted an event without id, type or source: %+v", ev)
		}
		if !utf8.Valid(body) {
			t.Fatalf("Decode accepted a body that is not UTF-8: %q", body)
		}
		if name, twice := memberTwice(body); twice {
			t.Fatalf("Decode accepted a body with member %q twice in one object: %q", name, body)
		}
		_ = ev.PayloadHash()
	})
}

// memberTwice reports a member name that appears twice in one object of the JSON text body.
func memberTwice(body []byte) (string, bool) {
	dec := json.NewDecoder(bytes.NewReader(body))
	type level struct {
		object bool
		names  map[string]bool
		name   bool // the next string token is a member name
	}
	var stack []*level
	for {
		tok, err := dec.Token()
		if err != nil {
			return "", false
		}
		var top *level
		if len(stack) > 0 {
			top = stack[len(stack)-1]
		}
		switch tok := tok.(type) {
		case json.Delim:
			switch tok {
			case '{', '[':
				stack = append(stack, &level{object: tok == '{', names: map[string]bool{}, name: tok == '{'})
				continue
			default:
				stack = stack[:len(stack)-1]
			}
		case string:
			if top != nil && top.object && top.name {
				if top.names[tok] {
					return tok, true
				}
				top.names[tok] = true
				top.name = false
				continue
			}
		}
		if len(stack) > 0 && stack[len(stack)-1].object {
			stack[len(stack)-1].name = true // a value ended: a name comes next
		}
	}
}
