package iam

import "strings"

// multivaluedKeys are the condition keys whose request value is a set (ArrayOf... in the
// service authorization reference), lower-cased: a condition on one needs ForAllValues or
// ForAnyValue, and without either it never matches a request that has the key. Every key the
// local cloud computes is either here or single-valued; the conformance suite checks this list
// against the simulator's copy of the reference.
var multivaluedKeys = map[string]bool{
	"dynamodb:leadingkeys": true,
	"dynamodb:attributes":  true,
	"aws:tagkeys":          true,
}

// Multivalued reports whether a condition key (any case) is multivalued.
func Multivalued(key string) bool { return multivaluedKeys[strings.ToLower(key)] }
