// Package testenv holds what this repository's tests need beyond the engine's test kit
// (pkg/testkit, pkg/testkit/fault): the sample events of events/, the local Parameter Store,
// and a bound on a test's work taken from go test's -timeout.
package testenv
