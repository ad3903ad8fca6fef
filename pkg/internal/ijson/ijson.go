package ijson

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// Error is what is wrong with a JSON text, and where: Path is the dotted path of the value
// ("data.lines.0.sku"; "" for the text as a whole), Problem says what is wrong with it.
type Error struct {
	Path    string
	Problem string
}

func (e *Error) Error() string {
	if e.Path == "" {
		return e.Problem
	}
	return e.Path + ": " + e.Problem
}

// In returns the path of the problem in a document found at where (a field of a message, ""
// for a whole message): where and Path joined by a dot, or the one that is not empty.
func (e *Error) In(where string) string {
	switch {
	case where == "":
		return e.Path
	case e.Path == "":
		return where
	}
	return where + "." + e.Path
}

// Check returns an *Error for the first problem of data, a JSON text the caller has parsed
// already (json.Valid): a string that is not valid UTF-8, an escaped lone surrogate, or a
// member name that appears twice in one object (compared after unescaping, as a decoder
// compares them). It returns nil when there is none. On a text that is not JSON it reports
// what it finds, or nothing.
func Check(data []byte) error {
	s := scanner{data: data, stack: make([]frame, 0, 8), names: make([][]byte, 0, 32)}
	return s.run()
}

// manyMembers is the size from which an object's names are looked up in a map.
const manyMembers = 32

// frame is an object or an array being scanned.
type frame struct {
	object bool
	name   bool                // the next string is a member name
	first  int                 // the object's first name in scanner.names
	seen   map[string]struct{} // its names, once it has many
	index  int                 // the array's element being scanned
}

type scanner struct {
	data  []byte
	stack []frame
	names [][]byte // the member names of the objects on the stack, each object's after its parent's
}

func (s *scanner) run() error {
	for i := 0; i < len(s.data); i++ {
		switch s.data[i] {
		case '{':
			s.stack = append(s.stack, frame{object: true, name: true, first: len(s.names)})
		case '[':
			s.stack = append(s.stack, frame{})
		case '}', ']':
			if n := len(s.stack); n > 0 {
				if f := s.stack[n-1]; f.object {
					s.names = s.names[:f.first]
				}
				s.stack = s.stack[:n-1]
			}
		case ',':
			if n := len(s.stack); n > 0 {
				f := &s.stack[n-1]
				f.name = f.object
				f.index++
			}
		case '"':
			end, escaped, err := s.str(i)
			if err != nil {
				return err
			}
			if n := len(s.stack); n > 0 && s.stack[n-1].name {
				if err := s.member(&s.stack[n-1], s.data[i:end+1], escaped); err != nil {
					return err
				}
			}
			i = end
		}
	}
	return nil
}

// member records the member name quoted (with its quotes) in object f, refusing one it has.
func (s *scanner) member(f *frame, quoted []byte, escaped bool) error {
	name := quoted[1 : len(quoted)-1]
	if escaped {
		var unq string
		_ = json.Unmarshal(quoted, &unq) // checked by str: valid
		name = []byte(unq)
	}
	f.name = false
	s.names = append(s.names, name)
	if f.seen != nil {
		if _, dup := f.seen[string(name)]; dup {
			return s.fail("appears twice in its object; a member name must be unique")
		}
		f.seen[string(name)] = struct{}{}
		return nil
	}
	own := s.names[f.first : len(s.names)-1]
	for _, n := range own {
		if bytes.Equal(n, name) {
			return s.fail("appears twice in its object; a member name must be unique")
		}
	}
	if len(own) >= manyMembers {
		f.seen = make(map[string]struct{}, 2*len(own))
		for _, n := range s.names[f.first:] {
			f.seen[string(n)] = struct{}{}
		}
	}
	return nil
}

// str scans the string that starts at the quote at i and returns the index of its closing
// quote and whether it holds an escape, refusing bytes that are not UTF-8 and escaped lone
// surrogates.
func (s *scanner) str(i int) (end int, escaped bool, err error) {
	for j := i + 1; j < len(s.data); j++ {
		switch c := s.data[j]; {
		case c == '"':
			if !utf8.Valid(s.data[i+1 : j]) {
				return 0, false, s.fail(s.invalidUTF8(i + 1))
			}
			return j, escaped, nil
		case c == '\\' && j+1 < len(s.data) && s.data[j+1] == 'u':
			escaped = true
			if j, err = s.escape(j); err != nil {
				return 0, false, err
			}
		case c == '\\':
			escaped = true
			j++
		}
	}
	return len(s.data), escaped, nil
}

// escape checks the \u escape at i, with the low surrogate after it when it is a high one,
// and returns the index of its last byte.
func (s *scanner) escape(i int) (int, error) {
	r, ok := s.hex(i)
	if !ok {
		return i + 1, nil // not JSON: the caller's parser says so
	}
	if !utf16.IsSurrogate(r) {
		return i + 5, nil
	}
	if low, ok := s.hex(i + 6); ok && r < 0xdc00 && utf16.DecodeRune(r, low) != utf8.RuneError {
		return i + 11, nil
	}
	return 0, s.fail(fmt.Sprintf("holds \\u%04x, a lone UTF-16 surrogate: it names no character", r))
}

// hex reads the \uXXXX escape at i.
func (s *scanner) hex(i int) (rune, bool) {
	if i+6 > len(s.data) || s.data[i] != '\\' || s.data[i+1] != 'u' {
		return 0, false
	}
	var r rune
	for _, c := range s.data[i+2 : i+6] {
		var d byte
		switch {
		case '0' <= c && c <= '9':
			d = c - '0'
		case 'a' <= c && c <= 'f':
			d = c - 'a' + 10
		case 'A' <= c && c <= 'F':
			d = c - 'A' + 10
		default:
			return 0, false
		}
		r = r<<4 | rune(d)
	}
	return r, true
}

// invalidUTF8 describes the first byte at or after from that is not UTF-8.
func (s *scanner) invalidUTF8(from int) string {
	for i := from; i < len(s.data); {
		r, n := utf8.DecodeRune(s.data[i:])
		if r == utf8.RuneError && n == 1 {
			return fmt.Sprintf("not valid UTF-8: byte %#02x at offset %d", s.data[i], i)
		}
		i += n
	}
	return "not valid UTF-8"
}

// fail is problem at the value being scanned: the path of the member or element each frame is
// in, up to the object whose member name is being scanned.
func (s *scanner) fail(problem string) *Error {
	parts := make([]string, 0, len(s.stack))
	for k, f := range s.stack {
		switch {
		case f.object && f.name:
			return &Error{Path: strings.Join(parts, "."), Problem: problem}
		case f.object:
			parts = append(parts, string(s.names[s.end(k)-1])) // its last name is the member being scanned
		default:
			parts = append(parts, strconv.Itoa(f.index))
		}
	}
	return &Error{Path: strings.Join(parts, "."), Problem: problem}
}

// end is the end of the names of the object at s.stack[k]: the first name of the next object
// deeper on the stack, or the end of all names.
func (s *scanner) end(k int) int {
	for _, f := range s.stack[k+1:] {
		if f.object {
			return f.first
		}
	}
	return len(s.names)
}
