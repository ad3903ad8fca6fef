package model_test

import (
	"testing"

	"github.com/onceflow/onceflow/pkg/testkit/shorttest"
)

// `go test -short ./...` passes on a fresh clone without SPIN or a C compiler: the model's
// checks skip there, saying how to run them.
func TestModel_short_run_skips_the_checks_and_needs_no_SPIN(t *testing.T) {
	t.Setenv("MODEL", "")
	shorttest.Skips(t, "TestModel_recovery_protocol")
	shorttest.Skips(t, "TestModel_split_agrees_with_the_whole")
}
