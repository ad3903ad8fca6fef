package dlq_test

import (
	"testing"

	"github.com/onceflow/onceflow/pkg/testkit"
)

// TestMain starts an emulator a test needs and finds no endpoint for (testkit.Main).
func TestMain(m *testing.M) { testkit.Main(m) }
