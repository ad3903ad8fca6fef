package cloudevent_test

import (
	"errors"
	"strings"
	"testing"
	"time"

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
		{"unknown field", `{"amount":1,"x":2}`, "data"},
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

func FuzzDecode(f *testing.F) {
	f.Add([]byte(`{"specversion":"1.0","id":"1","source":"s","type":"t","time":"2026-11-30T10:00:00Z","data":{"a":1}}`))
	f.Add([]byte(`{"specversion":"1.0","id":"","source":"s"}`))
	f.Add([]byte(`{"id":null,"data":[}`))
	f.Add([]byte(``))
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
		_ = ev.PayloadHash()
	})
}
