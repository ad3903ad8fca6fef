package batch_test

import (
	"context"
	"io"
	"log/slog"
	"maps"
	"slices"
	"testing"

	"github.com/onceflow/onceflow/pkg/batch"
	"github.com/onceflow/onceflow/pkg/metrics"
	"github.com/onceflow/onceflow/pkg/port"
)

// holdsSome is an engine (a port outside this module may bring its own) that holds the groups
// it is told to and no others, and keeps what it was asked to hold.
type holdsSome struct {
	holds map[string]bool
	asked map[string][]string // group: the message ids asked for, in order
}

func (h *holdsSome) Name() string                     { return "some" }
func (h *holdsSome) Begin(int, port.Rules) port.Batch { return nil }
func (h *holdsSome) Packs() bool                      { return false }
func (h *holdsSome) Logger() *slog.Logger             { return slog.New(slog.NewTextHandler(io.Discard, nil)) }
func (h *holdsSome) Metrics() metrics.Recorder        { return metrics.Discard }
func (h *holdsSome) HoldAhead(_ context.Context, group string, held []port.Held) (bool, error) {
	for _, e := range held {
		h.asked[group] = append(h.asked[group], e.MessageID)
	}
	return h.holds[group], nil
}

// The backstop marks the messages of each group the engine says it holds, in every group of
// the batch, whatever it answered for an earlier group: a message listed but not marked would
// be answered from the cache and never taken off its hold.
func TestBackstop_marks_the_messages_of_every_group_the_engine_holds(t *testing.T) {
	e := &holdsSome{holds: map[string]bool{"b": true}, asked: map[string][]string{}}
	const maxReceiveCount = 10
	msgs := []batch.Queued{
		{MessageID: "a1", Group: "a", OriginID: "a1", ReceiveCount: maxReceiveCount - 1}, // last receives: a is asked for
		{MessageID: "b1", Group: "b", OriginID: "b1", ReceiveCount: maxReceiveCount},
		{MessageID: "b2", Group: "b", OriginID: "b2", ReceiveCount: 1}, // rides along after b1
		{MessageID: "c1", Group: "c", OriginID: "c1", ReceiveCount: 1}, // not on its last receives
	}
	held := batch.Backstop(context.Background(), e, maxReceiveCount, msgs)
	if got := slices.Sorted(maps.Keys(held)); !slices.Equal(got, []int{1, 2}) {
		t.Errorf("marked %v; want [1 2]: b1 and b2, which b's hold lists, and not a1, whose group the engine does not hold", got)
	}
	if got := e.asked; len(got) != 2 || !slices.Equal(got["a"], []string{"a1"}) || !slices.Equal(got["b"], []string{"b1", "b2"}) {
		t.Errorf("asked to hold %v; want a: [a1], b: [b1 b2] (c's message is not on its last receives)", got)
	}
}
