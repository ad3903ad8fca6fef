package outbox_test

import (
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/onceflow/onceflow/pkg/cloudevent"
	"github.com/onceflow/onceflow/pkg/outbox"
)

func TestCheckText_refuses_exactly_the_characters_SQS_refuses(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name   string
		text   string
		offset int // -1: accepted
		r      rune
	}{
		{"plain text, tab, newline and carriage return", "a\tb\nc\rd", -1, 0},
		{"the last character of the basic plane before the surrogates", "x\uD7FF", -1, 0},
		{"private use and U+FFFD", "\uE000\uFFFD", -1, 0},
		{"an emoji (astral plane)", "ok 🎉", -1, 0},
		{"the last code point", "\U0010FFFF", -1, 0},
		{"NUL", "a\x00b", 1, 0},
		{"a C0 control", "ab\x1f", 2, 0x1f},
		{"U+FFFE", "é\uFFFE", 2, 0xFFFE},
		{"U+FFFF", "\uFFFF", 0, 0xFFFF},
		{"invalid UTF-8", "ab\xff", 2, '\uFFFD'},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := outbox.CheckText(c.text)
			var ue *outbox.UnsendableError
			switch {
			case c.offset < 0 && err != nil:
				t.Fatalf("CheckText(%q) = %v; want accepted", c.text, err)
			case c.offset >= 0 && !errors.As(err, &ue):
				t.Fatalf("CheckText(%q) = %v; want an *UnsendableError", c.text, err)
			case c.offset >= 0 && (ue.Offset != c.offset || ue.Rune != c.r):
				t.Fatalf("CheckText(%q) = %+v; want offset %d rune %U", c.text, ue, c.offset, c.r)
			}
		})
	}
}

func TestNewItem_body_escapes_what_SQS_or_its_emulator_refuses_and_decodes_to_the_same_event(t *testing.T) {
	t.Parallel()
	text := "party 🎉, noncharacters \uFFFE\uFFFF, a bell \a, \u00e9 and \uFFFD stay"
	ev, err := cloudevent.New("note-created-n1", "shop", "note.created", "n-1", time.Unix(0, 0), map[string]string{"content": text})
	if err != nil {
		t.Fatal(err)
	}
	item, err := outbox.NewItem(ev, time.Unix(0, 0))
	if err != nil {
		t.Fatal(err)
	}
	if err := outbox.CheckText(item.Body); err != nil {
		t.Fatalf("body %q: %v; want it sendable", item.Body, err)
	}
	for _, r := range item.Body {
		if r > 0xFFFF {
			t.Fatalf("body %q holds %U; want every character beyond U+FFFF escaped (fauxqs refuses them)", item.Body, r)
		}
	}
	back, err := cloudevent.Decode([]byte(item.Body))
	if err != nil {
		t.Fatal(err)
	}
	var data map[string]string
	if err := json.Unmarshal(back.Data, &data); err != nil || data["content"] != text {
		t.Fatalf("decoded content %q (%v); want %q", data["content"], err, text)
	}
}
