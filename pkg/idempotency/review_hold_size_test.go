package idempotency_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/onceflow/onceflow/pkg/idempotency"
)

// A hold is one item, and DynamoDB refuses an item past 400 KB: a group held long enough
// (some 1,000 held messages with ids of a hundred characters) can hold no more. That refusal
// can never succeed: the held message fails at once (no retries), is logged at error level
// naming the group and the limit, and is left to the queue's redrive policy, the group still
// held behind its blocker. The list is filled with long ids so that the test takes seconds.
// (The reviewer's version held 1,500 messages one by one and wanted every one held: a hold
// spread over several items is not built; see docs/failure-path.md.)
func TestReview_a_hold_at_the_item_size_limit_fails_the_message_at_once_and_loudly(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	counter := unique(t)
	c := f.consumerFor(t, "full", f.router(), holding)
	long := func(i int) string {
		s := fmt.Sprintf("%s-%d-", counter, i)
		return s + strings.Repeat("x", 4000-len(s))
	}
	if err := c.HoldGroup(ctx, "acct", "blocker-"+counter, "m-0", errors.New("failed 5 times: downstream throttled")); err != nil {
		t.Fatal(err)
	}
	// Fill the list to within a few KB of the limit: ten long entries a write, then one.
	n, step, lost := 1, 10, 0
	for step > 0 {
		list := make([]idempotency.Held, step)
		for i := range list {
			list[i] = idempotency.Held{EventID: long(n + i), MessageID: fmt.Sprintf("m-%d", n+i)}
		}
		err := c.HoldMessages(ctx, "acct", list)
		switch {
		case err == nil:
			n += step
		case errors.Is(err, idempotency.ErrHoldFull):
			step /= 10
		case lost < 3 && !errors.Is(err, idempotency.ErrChanged): // setup only: a connection lost under load
			lost++
		default:
			t.Fatalf("filling the hold: %v", err)
		}
		if n > 200 {
			t.Fatalf("%d entries of 4 KB held: the item size limit was never reached", n)
		}
	}
	f.logs.Reset()
	for i := range 20 { // held messages of ordinary size, until one does not fit any more
		msg := message(t, fmt.Sprintf("m-late-%d", i), fmt.Sprintf("%s-late-%d", counter, i), "test.counted", counted{Counter: counter, By: 1})
		msg.Attributes["MessageGroupId"] = "acct"
		puts := f.requests.Of("PutItem")
		_, err := process(ctx, c, msg)
		if errors.Is(err, idempotency.ErrHeld) {
			continue
		}
		if !errors.Is(err, idempotency.ErrHoldFull) || idempotency.IsPermanent(err) {
			t.Fatalf("held message %d at the limit: %v; want ErrHoldFull, not permanent (left to the queue's redrive policy)", i, err)
		}
		if got := f.requests.Of("PutItem") - puts; got != 1 {
			t.Errorf("the refused hold write was made %d times; want once (a ValidationException is never retried)", got)
		}
		if logs := f.logs.String(); !strings.Contains(logs, `"level":"ERROR"`) || !strings.Contains(logs, `"group":"acct"`) || !strings.Contains(logs, "400 KB") {
			t.Errorf("no error log naming the group and the limit: %s", logs)
		}
		if h, ok, err := idempotency.NewAdmin(f.db, f.records).Hold(ctx, "full", "acct"); err != nil || !ok || h.BlockerEventID != "blocker-"+counter {
			t.Errorf("the group is not held behind its blocker any more: %v, %v", ok, err)
		}
		return
	}
	t.Fatal("20 more messages held past the item size limit")
}
