package main

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/onceflow/onceflow/pkg/operator"
)

// The chaos drill (infra/workload's refusedChanged) runs a skip again only when the CLI's error
// says "refused, nothing written: " and carries ErrChanged's words: these words are a contract.
func TestRefused_says_nothing_was_written_and_why(t *testing.T) {
	var out bytes.Buffer
	err := refused(context.Background(), fmt.Errorf("hold of group acct-001: %w", operator.ErrChanged),
		ioStreams{out: &out, err: &out}, func() (any, bool, error) { return map[string]int{"held": 2}, true, nil })
	if err == nil || !strings.HasPrefix(err.Error(), "refused, nothing written: ") || !strings.Contains(err.Error(), operator.ErrChanged.Error()) {
		t.Errorf("refused = %v, want \"refused, nothing written: ...%s...\"", err, operator.ErrChanged)
	}
	if !strings.Contains(out.String(), "it is now:") {
		t.Errorf("refused printed %q, want the item as it is now", out.String())
	}
}
