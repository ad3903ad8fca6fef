package cloudevent

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strconv"
	"strings"

	"github.com/gowebpki/jcs"
)

// Canonical returns the JSON document data in canonical JSON, RFC 8785 (JCS): object members
// sorted, strings with their escapes normalised, numbers as ECMAScript writes their value (10,
// 10.0 and 1e1 are all 10), no insignificant space. Two encodings of one value are then the
// same bytes, whichever producer wrote them. ok is false when data is not JSON, or when it
// holds a number that an IEEE 754 double, the only number JCS knows, does not hold as written
// (9007199254740993, 0.10000000000000001, 1e400): canonical JSON would round it into another
// number, so that two different payloads would become one; such a document has no canonical
// form here, and its bytes as written are what identify it.
func Canonical(data []byte) (canon []byte, ok bool) {
	if !exactNumbers(data) {
		return nil, false
	}
	canon, err := jcs.Transform(data)
	return canon, err == nil
}

// CanonicalNumber returns the text of the JSON number lit as RFC 8785 writes its value ("10.0"
// and "1e1" are "10", "-0" is "0"), and ok false, with lit as it is, when a double does not hold
// that value exactly (see Canonical).
func CanonicalNumber(lit string) (string, bool) {
	f, err := strconv.ParseFloat(lit, 64)
	if err != nil {
		return lit, false
	}
	s, err := jcs.NumberToJSON(f)
	if err != nil || !sameDecimal(lit, s) {
		return lit, false
	}
	return s, true
}

// exactNumbers reports whether data is JSON whose every number a double holds as written.
func exactNumbers(data []byte) bool {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			return true
		}
		if err != nil {
			return false
		}
		if n, isNumber := tok.(json.Number); isNumber {
			if _, ok := CanonicalNumber(n.String()); !ok {
				return false
			}
		}
	}
}

// sameDecimal reports whether the JSON numbers a and b have the same decimal value.
func sameDecimal(a, b string) bool {
	da, ok := decimalOf(a)
	db, okb := decimalOf(b)
	return ok && okb && da == db
}

// decimal is a number's value as 0.<digits> × 10^exp with neither leading nor trailing zeros
// in digits (zero: no digits, no sign).
type decimal struct {
	neg    bool
	digits string
	exp    int
}

// decimalOf reads a JSON number (or ECMAScript's writing of one: "1e+21").
func decimalOf(s string) (decimal, bool) {
	var d decimal
	if s, d.neg = strings.CutPrefix(s, "-"); s == "" {
		return d, false
	}
	mant, e, hasExp := strings.Cut(strings.ToLower(s), "e")
	exp := 0
	if hasExp {
		n, err := strconv.Atoi(strings.TrimPrefix(e, "+"))
		if err != nil {
			return d, false
		}
		exp = n
	}
	whole, frac, _ := strings.Cut(mant, ".")
	digits := whole + frac
	point := len(whole)
	trimmed := strings.TrimLeft(digits, "0")
	point -= len(digits) - len(trimmed)
	d.digits = strings.TrimRight(trimmed, "0")
	if d.digits == "" {
		return decimal{}, true
	}
	d.exp = point + exp
	return d, true
}
