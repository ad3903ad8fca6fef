package main

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/onceflow/onceflow/pkg/idempotency"
	"github.com/onceflow/onceflow/pkg/operator"
	"github.com/onceflow/onceflow/pkg/port"
)

// An account held through a few minutes of heavy traffic: its hold lists more messages than
// one DynamoDB item holds (400 KB: some 2,130 entries of the size a held live message has,
// ids of 36 characters). The account's next movement must be held too, after them, and
// dead-lettered by the engine with its reason and source queue: never left to SQS's redrive
// policy, which would move it unheld (applied, once the tail drains, after later movements)
// and unnamed (the runbook's redrive refuses a letter that names no source queue). The list
// is written through the port contract's HoldAhead; the movement goes through the pipeline.
func TestRecovery_a_message_held_past_one_items_size_is_held_and_dead_lettered_by_the_engine(t *testing.T) {
	t.Parallel()
	c := newCloud(t)
	f := c.pipeline(t, pipelineConfig{MaxReceiveCount: backstopReceives})
	n := fillHold(t, f.engine, "acct", 2400)
	t.Logf("the hold of account acct lists %d messages", n) // as many as fit, where one item holds them

	x := "movement-2026-12-01-00000000-0000-0000-0000-000000000001" // longer than theirs (their times vary by a few bytes): it fits nowhere they did not
	f.sendNew(t, "acct", x)
	f.consume(t)

	ls := f.inView(t)
	if len(ls) != 1 || ls[0].EventID != x || ls[0].Reason == "" || ls[0].SourceQueueARN == "" {
		t.Errorf("dead-letter queue shows %s; want x's letter, dead-lettered by the engine with its reason and source queue", letterList(ls))
	}
	if h, _ := f.hold(t, "acct"); len(h.Held) == 0 || h.Held[len(h.Held)-1].EventID != x {
		t.Errorf("the hold lists %d messages and does not end with x; want x held after the %d before it", len(h.Held), n)
	}
	if code, out := f.cli(t, "dlq", "redrive", "--dry-run"); code != 0 || !strings.Contains(out, "would move 1,") {
		t.Errorf("dlq redrive --dry-run: exit %d (%s); want x's letter redriven to its source queue", code, lastLines(out, 1))
	}
}

// fillHold holds group behind a blocker and past messages after it: more than one item's
// 400 KB takes (some 2,130 of them), written five hundred at a time. Where DynamoDB refuses
// the item's size first, it fills the item to the last entry that fits. It returns how many
// the hold lists.
func fillHold(t *testing.T, e *idempotency.Consumer, group string, past int) int {
	t.Helper()
	id := func(kind string, i int) string { return fmt.Sprintf("%08d-%s-4b2a-9e1f-%012d", i, kind, i) } // 36 characters
	if err := holdAhead(t.Context(), e, group, port.Held{EventID: id("0evt", 0), MessageID: id("0msg", 0)}, errors.New("failed 5 times: downstream unavailable")); err != nil {
		t.Fatal(err)
	}
	n, step, lost := 1, 500, 0
	for n < past {
		list := make([]port.Held, min(step, past-n))
		for i := range list {
			list[i] = port.Held{EventID: id("0evt", n+i), MessageID: id("0msg", n+i)}
		}
		switch _, err := e.Engine().HoldAhead(t.Context(), group, list); {
		case err == nil:
			n += len(list)
		case errors.Is(err, port.ErrHoldFull) && len(list) == 1:
			return n
		case errors.Is(err, port.ErrHoldFull):
			step = max(len(list)/5, 1)
		case lost < 3 && !errors.Is(err, operator.ErrChanged): // a connection lost under a large item: written again
			lost++
		default:
			t.Fatalf("filling the hold: %v", err)
		}
	}
	return n
}
