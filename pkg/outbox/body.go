package outbox

import (
	"fmt"
	"unicode/utf16"
	"unicode/utf8"
)

// UnsendableError is text SQS refuses in a message: it accepts only the characters #x9, #xA,
// #xD, #x20 to #xD7FF, #xE000 to #xFFFD and #x10000 to #x10FFFF, in valid UTF-8.
type UnsendableError struct {
	Offset int  // byte offset of the first refused character
	Rune   rune // that character, utf8.RuneError for invalid UTF-8
}

func (e *UnsendableError) Error() string {
	if e.Rune == utf8.RuneError {
		return fmt.Sprintf("invalid UTF-8 at byte %d, which SQS refuses", e.Offset)
	}
	return fmt.Sprintf("character %U at byte %d, which SQS refuses", e.Rune, e.Offset)
}

// CheckText returns an *UnsendableError for the first character of s that SQS refuses in a
// message body or attribute, nil when SQS accepts all of s. A service checks its input with it
// before writing an event, and the Relay checks every event body before sending it.
func CheckText(s string) error {
	for i, r := range s {
		if r == utf8.RuneError {
			if _, size := utf8.DecodeRuneInString(s[i:]); size == 1 {
				return &UnsendableError{Offset: i, Rune: r}
			}
		}
		if !sendable(r) {
			return &UnsendableError{Offset: i, Rune: r}
		}
	}
	return nil
}

func sendable(r rune) bool {
	switch {
	case r == 0x9 || r == 0xA || r == 0xD:
		return true
	case r >= 0x20 && r <= 0xD7FF, r >= 0xE000 && r <= 0xFFFD, r >= 0x10000 && r <= 0x10FFFF:
		return true
	}
	return false
}

// safeJSON rewrites the JSON text b so that it holds only characters of the Basic
// Multilingual Plane that SQS accepts: every other character, which JSON allows only inside
// strings, becomes its \u escape (a UTF-16 surrogate pair beyond U+FFFF), and a byte that is
// not UTF-8 becomes \ufffd, as encoding/json decodes it. The text decodes to the same value.
// SQS itself accepts characters beyond U+FFFF; escaping them too keeps bodies sendable to
// emulators that refuse them (fauxqs refuses U+10000 to U+10FFFF).
func safeJSON(b []byte) []byte {
	out := make([]byte, 0, len(b))
	for i := 0; i < len(b); {
		r, size := utf8.DecodeRune(b[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			out = append(out, `\ufffd`...)
		case r >= 0x10000:
			hi, lo := utf16.EncodeRune(r)
			out = fmt.Appendf(out, `\u%04x\u%04x`, hi, lo)
		case !sendable(r):
			out = fmt.Appendf(out, `\u%04x`, r)
		default:
			out = append(out, b[i:i+size]...)
		}
		i += size
	}
	return out
}
