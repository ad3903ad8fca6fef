package lease

import (
	"testing"

	"github.com/onceflow/onceflow/pkg/internal/engine"
)

// The lengths this package documents are the engine's.
func TestLengths_are_the_engines(t *testing.T) {
	if DefaultMargin != engine.DefaultLeaseMargin || MaxLength != engine.MaxLease {
		t.Errorf("DefaultMargin %v, MaxLength %v; the engine's are %v, %v", DefaultMargin, MaxLength, engine.DefaultLeaseMargin, engine.MaxLease)
	}
}
