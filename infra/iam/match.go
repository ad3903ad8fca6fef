package iam

import "strings"

// Like reports whether s matches an IAM wildcard pattern, case-sensitively: * is any run of
// characters (colons and slashes included), ? is one character. StringLike conditions match
// this way; ARNs match component by component (see ARNLike).
func Like(pattern, s string) bool { return like(pattern, s) }

// ARNLike reports whether arn matches pattern as the ArnLike condition operator does: each of
// the six colon-separated components (arn, partition, service, region, account, and the
// resource, which keeps its own colons) on its own, with * and ? inside it, case-sensitively.
// Neither matches when it has fewer than six components.
func ARNLike(pattern, arn string) bool {
	p, ok := arnComponents(pattern)
	a, ok2 := arnComponents(arn)
	if !ok || !ok2 {
		return false
	}
	for i := range p {
		if !like(p[i], a[i]) {
			return false
		}
	}
	return true
}

// arnComponents splits an ARN into its six components; ok is false for fewer than six.
func arnComponents(s string) ([]string, bool) {
	c := strings.SplitN(s, ":", 6)
	return c, len(c) == 6
}

// resourceMatches reports whether a resource matches a statement's Resource pattern as IAM
// matches it: "*" matches every resource; an ARN component by component, the partition,
// service, region and account case-insensitively, the resource part case-sensitively, with *
// and ? inside each component; an ARN the policy leaves short (fewer than six components) and
// ends with * has that * stand for the components left out. ParsePolicy refuses the patterns
// whose meaning is in doubt (a short ARN without a trailing *, a wildcard in the service or
// the resource type).
func resourceMatches(pattern, resource string) bool {
	if pattern == "*" {
		return true
	}
	if !strings.HasPrefix(pattern, "arn:") {
		return like(pattern, resource)
	}
	p := strings.SplitN(pattern, ":", 6)
	if len(p) < 6 && !strings.HasSuffix(pattern, "*") {
		return false
	}
	for len(p) < 6 {
		p = append(p, "*")
	}
	a, ok := arnComponents(resource)
	if !ok {
		return false
	}
	for i := range 5 {
		if !like(strings.ToLower(p[i]), strings.ToLower(a[i])) {
			return false
		}
	}
	return like(p[5], a[5])
}

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
