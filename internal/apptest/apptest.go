package apptest

import (
	"testing"

	"github.com/onceflow/onceflow/internal/testenv"
)

// LoadEvent decodes the sample events/<name> into v (testenv.SampleEvent). An API request
// (payload 2.0) without authorizer claims gets those of a token of Subject granting AllScopes
// (see Authorized; Anonymous takes them away again).
func LoadEvent(tb testing.TB, name string, v any) {
	tb.Helper()
	testenv.SampleEvent(tb, name, v)
	authorizeByDefault(v)
}
