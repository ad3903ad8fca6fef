package gatekeeper

import (
	"strings"
	"unicode"
)

// keyConditionTokens splits a DynamoDB key condition expression into its tokens: names (pk,
// #p), values (:v), comparison operators (=, <>, <, <=, >, >=), parentheses and commas;
// keywords (AND, BETWEEN) and functions (begins_with) are names here.
func keyConditionTokens(expr string) []string {
	var out []string
	r := []rune(expr)
	for i := 0; i < len(r); {
		switch c := r[i]; {
		case unicode.IsSpace(c):
			i++
		case strings.ContainsRune("(),", c):
			out = append(out, string(c))
			i++
		case strings.ContainsRune("=<>", c):
			j := i + 1
			if j < len(r) && strings.ContainsRune("=>", r[j]) && c != '=' {
				j++
			}
			out = append(out, string(r[i:j]))
			i = j
		default:
			j := i + 1
			for j < len(r) && !unicode.IsSpace(r[j]) && !strings.ContainsRune("(),=<>", r[j]) {
				j++
			}
			out = append(out, string(r[i:j]))
			i = j
		}
	}
	return out
}

// partitionKeyValue finds the equality on attribute attr in a key condition expression, written
// either way round (pk = :v, :v = #p), and returns the name of its value (:v).
func partitionKeyValue(expr, attr string, names map[string]string) (string, bool) {
	toks := keyConditionTokens(expr)
	name := func(t string) string {
		if n, ok := names[t]; ok {
			return n
		}
		return t
	}
	for i := 1; i+1 < len(toks); i++ {
		if toks[i] != "=" {
			continue
		}
		l, r := toks[i-1], toks[i+1]
		switch {
		case strings.HasPrefix(r, ":") && name(l) == attr:
			return r, true
		case strings.HasPrefix(l, ":") && name(r) == attr:
			return l, true
		}
	}
	return "", false
}
