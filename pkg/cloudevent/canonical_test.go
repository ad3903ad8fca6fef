package cloudevent_test

import (
	"testing"

	"github.com/onceflow/onceflow/pkg/cloudevent"
)

func event(data string) cloudevent.Event {
	return cloudevent.Event{ID: "order-1", Type: "order.placed", Source: "shop", Data: []byte(data)}
}

// Encodings of one value are one payload: as Go, Python, JavaScript and Java producers write
// it, whatever the member order, the escapes or the writing of a number.
func TestPayloadHash_is_one_for_every_encoding_of_one_value(t *testing.T) {
	for _, tc := range []struct{ name, a, b string }{
		{"an integer and its float", `{"n":10}`, `{"n":10.0}`},
		{"an exponent", `{"n":10}`, `{"n":1e1}`},
		{"a decimal's trailing zero", `{"price":10.5}`, `{"price":10.50}`},
		{"negative zero", `{"n":0}`, `{"n":-0}`},
		{"member order, nested", `{"a":{"x":1,"y":2},"b":[1,2]}`, `{"b":[1,2],"a":{"y":2,"x":1}}`},
		{"whitespace", `{"a":1}`, "{ \"a\" :\n 1 }"},
		{"an escaped letter", `{"city":"Orléans"}`, `{"city":"Orl\u00e9ans"}`},
		{"an escaped slash", `{"path":"a/b"}`, `{"path":"a\/b"}`},
		{"a decimal a double rounds alike", `{"p":0.1}`, `{"p":0.10}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if a, b := event(tc.a).PayloadHash(), event(tc.b).PayloadHash(); a != b {
				t.Errorf("%s and %s hash %.12s and %.12s; want one hash", tc.a, tc.b, a, b)
			}
		})
	}
}

// Values that differ stay different, also where a double cannot tell them apart: a number
// past 2^53 keeps its digits as written, so two payloads are never made one by rounding.
func TestPayloadHash_tells_different_values_apart(t *testing.T) {
	for _, tc := range []struct{ name, a, b string }{
		{"another number", `{"n":10}`, `{"n":11}`},
		{"a number and its string", `{"n":10}`, `{"n":"10"}`},
		{"integers past 2^53 a double rounds to one", `{"id":9007199254740993}`, `{"id":9007199254740992}`},
		{"decimals past a double's precision", `{"p":0.10000000000000001}`, `{"p":0.1}`},
		{"a number too small for a double", `{"p":1e-400}`, `{"p":0}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if a, b := event(tc.a).PayloadHash(), event(tc.b).PayloadHash(); a == b {
				t.Errorf("%s and %s hash alike; want two hashes", tc.a, tc.b)
			}
		})
	}
}

func TestCanonicalNumber_writes_the_value_and_keeps_what_a_double_cannot_hold(t *testing.T) {
	for _, tc := range []struct {
		lit, want string
		ok        bool
	}{
		{"10", "10", true}, {"10.0", "10", true}, {"1e1", "10", true}, {"1E+1", "10", true},
		{"-0", "0", true}, {"0.5e-3", "0.0005", true}, {"1e21", "1e+21", true}, {"100000000000000000000", "100000000000000000000", true},
		{"9007199254740993", "9007199254740993", false}, {"1e400", "1e400", false}, {"1e-400", "1e-400", false},
	} {
		if got, ok := cloudevent.CanonicalNumber(tc.lit); got != tc.want || ok != tc.ok {
			t.Errorf("CanonicalNumber(%s) = %s, %v; want %s, %v", tc.lit, got, ok, tc.want, tc.ok)
		}
	}
}

func TestCanonical_is_RFC_8785(t *testing.T) {
	// RFC 8785's own example (section 3.2.2), its numbers and escapes.
	in := `{"numbers": [333333333.33333329, 1E30, 4.50, 2e-3, 0.000000000000000000000000001],
	  "string": "\u20ac$\u000F\u000aA'\u0042\u0022\u005c\\\"\/", "literals": [null, true, false]}`
	want := `{"literals":[null,true,false],"numbers":[333333333.3333333,1e+30,4.5,0.002,1e-27],"string":"€$\u000f\nA'B\"\\\\\"/"}`
	// 333333333.33333329 is no double as written: the document has no canonical form here.
	if _, ok := cloudevent.Canonical([]byte(in)); ok {
		t.Errorf("Canonical accepted 333333333.33333329, which a double rounds")
	}
	exact := `{"numbers": [333333333.3333333, 1E30, 4.50, 2e-3, 0.000000000000000000000000001],
	  "string": "\u20ac$\u000F\u000aA'\u0042\u0022\u005c\\\"\/", "literals": [null, true, false]}`
	got, ok := cloudevent.Canonical([]byte(exact))
	if !ok || string(got) != want {
		t.Errorf("Canonical = %s, %v\nwant        %s", got, ok, want)
	}
	if _, ok := cloudevent.Canonical([]byte(`{"a":`)); ok {
		t.Error("Canonical accepted a document that is not JSON")
	}
}
