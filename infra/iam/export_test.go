package iam

// SwapOperators makes the evaluator evaluate the condition operators a and b (lower-cased, no
// set qualifier: "stringlike") each as the other until restore is called: a deliberately wrong
// operator, which the conformance suite must catch.
func SwapOperators(a, b string) (restore func()) {
	oa, ob := operators[a], operators[b]
	operators[a], operators[b] = ob, oa
	return func() { operators[a], operators[b] = oa, ob }
}

// DeepCopy and List are the package's deepCopy and list, for its tests' policy documents.
var (
	DeepCopy = deepCopy
	List     = list
)
