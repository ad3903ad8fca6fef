package iam

import "strings"

// Like reports whether s matches an IAM wildcard pattern, case-sensitively: * is any run of
// characters (colons and slashes included), ? is one character. Resources and StringLike
// conditions match this way.
func Like(pattern, s string) bool { return like(pattern, s) }

// actionMatches reports whether an action matches a statement's action pattern: service
// prefix and name are case-insensitive.
func actionMatches(pattern, action string) bool {
	return like(strings.ToLower(pattern), strings.ToLower(action))
}

// like is glob matching with * and ? over runes, iterative with one backtrack point.
func like(pattern, str string) bool {
	p, s := []rune(pattern), []rune(str)
	pi, si := 0, 0
	star, mark := -1, 0
	for si < len(s) {
		switch {
		case pi < len(p) && (p[pi] == '?' || p[pi] == s[si]):
			pi++
			si++
		case pi < len(p) && p[pi] == '*':
			star, mark = pi, si
			pi++
		case star >= 0:
			pi = star + 1
			mark++
			si = mark
		default:
			return false
		}
	}
	for pi < len(p) && p[pi] == '*' {
		pi++
	}
	return pi == len(p)
}
