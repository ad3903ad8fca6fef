package idempotency_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/onceflow/onceflow/pkg/idempotency"
	"github.com/onceflow/onceflow/pkg/internal/applytest"
	"github.com/onceflow/onceflow/pkg/internal/engine"
	"github.com/onceflow/onceflow/pkg/internal/holdlist"
	"github.com/onceflow/onceflow/pkg/operator"
)

func holding(c *idempotency.Config) { c.AfterDeadLetter = idempotency.HoldGroup; c.CacheSize = -1 }

// A hold item written before holds kept a list (only its blocker) still holds its group, and
// is released by its blocker: the messages held behind it meanwhile follow in order.
func TestConsumer_a_hold_written_before_holds_kept_a_list_holds_and_releases_in_order(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	counter := applytest.Unique(t)
	name := "legacy-" + counter
	c := f.ConsumerFor(t, name, f.Router(), holding)
	old, err := attributevalue.MarshalMap(map[string]string{"pk": "#hold#" + name + "#group-1", "consumer": name, "group": "group-1",
		"blockerEventId": counter + "-a", "blockerMessageId": "m1", "blockerReason": "failed 5 times", "heldAt": "2026-11-30T10:00:00Z"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.DB.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(f.Records), Item: old}); err != nil {
		t.Fatal(err)
	}
	b := applytest.Message(t, "m2", counter+"-b", "test.counted", applytest.Counted{Counter: counter, By: 2})
	if _, err := applytest.Process(ctx, c, b); !errors.Is(err, idempotency.ErrHeld) {
		t.Fatalf("b behind the old hold: %v; want held", err)
	}
	for _, m := range []struct {
		id string
		by int
	}{{"-a", 1}, {"-b", 2}, {"-c", 4}} {
		res, err := applytest.Process(ctx, c, applytest.Message(t, "r"+m.id, counter+m.id, "test.counted", applytest.Counted{Counter: counter, By: m.by}))
		if err != nil || res.Outcome != idempotency.Applied {
			t.Fatalf("%s after the redrive = %+v, %v; want applied", m.id, res, err)
		}
	}
	if got := f.Counter(t, counter); got != 7 {
		t.Errorf("counter = %d; want 7 (a, b, c once each)", got)
	}
}

// A commit of a group that is not held costs its one transaction; only the recovery path pays
// more: holding the group is one transaction (its write and the check that the event is not
// decided), a held message or the head of a hold costs one more call (the hold comes back
// with the cancellation, so it is not read again).
func TestConsumer_hold_costs_round_trips_only_on_the_recovery_path(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	counter := applytest.Unique(t)
	c := f.ConsumerFor(t, "cost-"+counter, f.Router(), holding)
	calls := func(what string, want int64, do func() error) {
		t.Helper()
		before := f.Requests.Total()
		if err := do(); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		if got := f.Requests.Total() - before; got != want {
			t.Errorf("%s: %d calls; want %d (%s)", what, got, want, f.Requests)
		}
	}
	apply := func(suffix string, want idempotency.Outcome) func() error {
		return func() error {
			res, err := applytest.Process(ctx, c, applytest.Message(t, "m"+suffix, counter+suffix, "test.counted", applytest.Counted{Counter: counter, By: 1}))
			if want == idempotency.Failed && errors.Is(err, idempotency.ErrHeld) {
				return nil
			}
			if err != nil || res.Outcome != want {
				return errors.Join(err, errors.New("outcome "+string(res.Outcome)+", want "+string(want)))
			}
			return nil
		}
	}
	calls("a commit, group not held", 1, apply("-x", idempotency.Applied))
	calls("holding the group", 1, func() error {
		return engineOf(c).HoldGroup(ctx, "group-1", holdlist.Held{EventID: counter + "-a", MessageID: "m-a"}, errors.New("failed 5 times"))
	})
	calls("a live message while held", 2, apply("-b", idempotency.Failed))
	calls("the head, redriven", 2, apply("-a", idempotency.Applied))
	calls("the last held message", 2, apply("-b", idempotency.Applied))
	calls("a commit after the hold", 1, apply("-c", idempotency.Applied))
	// a redelivery may be listed by an earlier batch's backstop: its record and its group's hold
	// read (not the cache), nothing written when it is not listed
	calls("a duplicate redelivered, group not held", 2, func() error {
		res, err := applytest.Process(ctx, c, applytest.Redelivered(applytest.Message(t, "m-c", counter+"-c", "test.counted", applytest.Counted{Counter: counter, By: 1}), 2))
		if err != nil || res.Outcome != idempotency.Duplicate {
			return errors.Join(err, errors.New("outcome "+string(res.Outcome)+", want duplicate"))
		}
		return nil
	})
}

// A re-send of the blocker under a new message id (the producer sent it again) is the head of
// the hold: it is applied and takes only itself off; the messages held behind it stay held.
func TestConsumer_a_resend_of_the_blocker_releases_only_the_blocker(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	counter := applytest.Unique(t)
	c := f.ConsumerFor(t, "resend-"+counter, f.Router(), holding)
	if err := engineOf(c).HoldGroup(ctx, "group-1", holdlist.Held{EventID: counter + "-a", MessageID: "m-a"}, errors.New("failed 5 times")); err != nil {
		t.Fatal(err)
	}
	msg := func(id, suffix string) events.SQSMessage {
		return applytest.Message(t, id, counter+suffix, "test.counted", applytest.Counted{Counter: counter, By: 1})
	}
	if _, err := applytest.Process(ctx, c, msg("m-b", "-b")); !errors.Is(err, idempotency.ErrHeld) {
		t.Fatalf("b: %v; want held", err)
	}
	if res, err := applytest.Process(ctx, c, msg("m-a-resent", "-a")); err != nil || res.Outcome != idempotency.Applied {
		t.Fatalf("the blocker re-sent = %+v, %v; want applied", res, err)
	}
	var held *engine.HeldError
	if _, err := applytest.Process(ctx, c, msg("m-c", "-c")); !errors.As(err, &held) || held.BlockerEventID != counter+"-b" {
		t.Errorf("c after the re-sent blocker: %v; want held behind b", err)
	}
}

// HoldGroup of a message already on the held list writes nothing to the hold, but still asks
// whether the event was decided meanwhile (the check alone, one transaction): a decided event
// is answered (ErrDecided) and taken off the list, so that nothing is held behind a message
// that is done with.
func TestConsumer_HoldGroup_of_a_listed_event_decided_meanwhile_answers_it_and_takes_it_off(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	counter := applytest.Unique(t)
	name := "listed-" + counter
	c := f.ConsumerFor(t, name, f.Router(), holding)
	x := applytest.Message(t, "m-x", counter+"-x", "test.counted", applytest.Counted{Counter: counter, By: 1})
	ev := mustDecode(t, x)
	held := holdlist.Held{EventID: ev.ID, MessageID: "m-x", PayloadHash: ev.PayloadHash()}
	for _, e := range []holdlist.Held{{EventID: counter + "-a", MessageID: "m-a"}, held} {
		if err := engineOf(c).HoldGroup(ctx, "group-1", e, errors.New("failed 5 times")); err != nil {
			t.Fatal(err)
		}
	}
	if err := engineOf(c).HoldGroup(ctx, "group-1", held, errors.New("failed 5 times")); err != nil {
		t.Fatalf("HoldGroup of a listed message = %v; want nil (it keeps its place)", err)
	}
	rec, err := attributevalue.MarshalMap(operator.Record{Key: operator.Key(name, ev.ID), Consumer: name, EventID: ev.ID,
		Outcome: string(idempotency.Applied), PayloadHash: ev.PayloadHash(), ExpiresAt: time.Now().Add(time.Hour).Unix()})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.DB.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(f.Records), Item: rec}); err != nil { // decided meanwhile
		t.Fatal(err)
	}
	before := f.Requests.Of("TransactWriteItems")
	if err := engineOf(c).HoldGroup(ctx, "group-1", held, errors.New("failed 5 times")); !errors.Is(err, engine.ErrDecided) {
		t.Fatalf("HoldGroup of a listed message decided meanwhile = %v; want ErrDecided", err)
	}
	if got := f.Requests.Of("TransactWriteItems") - before; got != 1 {
		t.Errorf("%d transactions; want 1, the check alone (taking it off is a write of the hold alone)", got)
	}
	h, ok, err := operator.New(f.DB, f.Records).Hold(ctx, name, "group-1")
	if err != nil || !ok || len(h.Held) != 1 || h.Held[0].EventID != counter+"-a" {
		t.Errorf("hold = %+v, %v, %v; want a alone: x taken off", h.Held, ok, err)
	}
}

// A producer's re-send of an event, held by the backstop by its own message id before it was
// decoded, is that event's once decoded: its entry learns the event (not an earlier entry of
// the same event), and once the event is skipped it holds nothing, whether it fails again
// (HoldGroup: ErrSkipped, its entry taken off) or succeeds past the hold (its entry taken off
// with its commit). Else the group would stay held behind an entry that no letter decides
// (found by the recovery model, scenarios 12 and 14).
func TestConsumer_a_resend_listed_by_its_message_id_is_its_events_once_decoded(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	a := operator.New(f.DB, f.Records)
	setup := func(t *testing.T, skip bool) (*idempotency.Consumer, string, holdlist.Held) {
		counter := applytest.Unique(t)
		name := "resent-" + counter
		c := f.ConsumerFor(t, name, f.Router(), holding)
		ev := mustDecode(t, applytest.Message(t, "m-r", counter+"-1", "test.counted", applytest.Counted{Counter: counter, By: 1}))
		first := holdlist.Held{EventID: ev.ID, MessageID: "m-1", PayloadHash: ev.PayloadHash()}
		if err := engineOf(c).HoldGroup(ctx, "g", first, errors.New("failed 5 times")); err != nil {
			t.Fatal(err)
		}
		if err := engineOf(c).HoldMessages(ctx, "g", []holdlist.Held{{EventID: counter + "-0", MessageID: "m-0"}, {MessageID: "m-r"}, {EventID: counter + "-2", MessageID: "m-2"}}); err != nil {
			t.Fatal(err)
		}
		if skip {
			h, _, err := a.Hold(ctx, name, "g")
			if err != nil {
				t.Fatal(err)
			}
			if _, err := a.SkipBlocker(ctx, h, "ops", "cannot succeed"); err != nil {
				t.Fatal(err)
			}
		}
		return c, name, holdlist.Held{EventID: ev.ID, MessageID: "m-r", PayloadHash: ev.PayloadHash()}
	}
	entries := func(t *testing.T, name string) []string {
		h, _, err := a.Hold(ctx, name, "g")
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, e := range h.Held {
			got = append(got, e.MessageID)
		}
		return got
	}
	t.Run("learns", func(t *testing.T) {
		c, name, resent := setup(t, false)
		if err := engineOf(c).HoldGroup(ctx, "g", resent, errors.New("failed 5 times")); err != nil {
			t.Fatal(err)
		}
		h, _, err := a.Hold(ctx, name, "g")
		if err != nil || len(h.Held) != 4 || h.Held[2].MessageID != "m-r" || h.Held[2].EventID != resent.EventID {
			t.Errorf("hold %v, %v; want m-r's own entry (third) to know event %s", entries(t, name), err, resent.EventID)
		}
	})
	t.Run("skip", func(t *testing.T) { // the blocker skipped: its event's re-send goes with it
		c, name, resent := setup(t, false)
		if err := engineOf(c).HoldGroup(ctx, "g", resent, errors.New("failed 5 times")); err != nil {
			t.Fatal(err)
		}
		h, _, err := a.Hold(ctx, name, "g")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := a.SkipBlocker(ctx, h, "ops", "cannot succeed"); err != nil {
			t.Fatal(err)
		}
		if got := entries(t, name); !slices.Equal(got, []string{"m-0", "m-2"}) {
			t.Errorf("hold %v; want m-0, m-2: the skipped event's re-send skipped with it", got)
		}
	})
	t.Run("discarded", func(t *testing.T) { // the blocker discarded: its re-send, received again, is answered and goes
		c, name, resent := setup(t, false)
		msg := applytest.Message(t, "m-r", resent.EventID, "test.counted", applytest.Counted{Counter: strings.TrimSuffix(resent.EventID, "-1"), By: 1})
		msg.Attributes["MessageGroupId"] = "g"
		if _, err := a.Discard(ctx, operator.Discard{Consumer: name, EventID: resent.EventID, MessageID: "m-1", Group: "g", Body: msg.Body}); err != nil {
			t.Fatal(err)
		}
		// received again below its last receives (the backstop listed it in an earlier batch,
		// behind the blocker on its own last receives), not redriven
		if res, err := applytest.Process(ctx, c, applytest.Redelivered(msg, 2)); err != nil || res.Outcome != idempotency.Duplicate {
			t.Fatalf("the discarded event's re-send = %+v, %v; want a duplicate, answered from its record", res, err)
		}
		if got := entries(t, name); !slices.Equal(got, []string{"m-0", "m-2"}) {
			t.Errorf("hold %v; want m-0, m-2: the discarded event's re-send answered holds nothing", got)
		}
	})
	t.Run("skipped-fails", func(t *testing.T) {
		c, name, resent := setup(t, true)
		if err := engineOf(c).HoldGroup(ctx, "g", resent, errors.New("failed 5 times")); !errors.Is(err, engine.ErrSkipped) {
			t.Fatalf("HoldGroup of a skipped event's re-send = %v; want ErrSkipped", err)
		}
		if got := entries(t, name); !slices.Equal(got, []string{"m-0", "m-2"}) {
			t.Errorf("hold %v; want m-0, m-2: the skipped event's re-send holds nothing", got)
		}
	})
	t.Run("skipped-applied", func(t *testing.T) {
		c, name, resent := setup(t, true)
		msg := applytest.Message(t, "m-r", resent.EventID, "test.counted", applytest.Counted{Counter: strings.TrimSuffix(resent.EventID, "-1"), By: 1})
		msg.Attributes["MessageGroupId"] = "g"
		if res, err := applytest.Process(ctx, c, msg); err != nil || res.Outcome != idempotency.Applied {
			t.Fatalf("the skipped event's re-send = %+v, %v; want applied past the hold", res, err)
		}
		if got := entries(t, name); !slices.Equal(got, []string{"m-0", "m-2"}) {
			t.Errorf("hold %v; want m-0, m-2: the re-send applied holds nothing", got)
		}
	})
}

// The head of a hold commits with the write that takes it off, and with it every other entry
// of its event and payload: a producer's re-send of the head's event, listed by the backstop
// under its own message id and known as that event since, is decided with it. The messages
// held behind them then go on: nothing holds the group behind an event that is applied.
func TestConsumer_the_head_commits_taking_its_events_resend_off_too(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	counter := applytest.Unique(t)
	c := f.ConsumerFor(t, "headresend-"+counter, f.Router(), holding)
	msg := func(id, suffix string) events.SQSMessage {
		return applytest.Message(t, id, counter+suffix, "test.counted", applytest.Counted{Counter: counter, By: 1})
	}
	ev := mustDecode(t, msg("m-a", "-a"))
	if err := engineOf(c).HoldGroup(ctx, "group-1", holdlist.Held{EventID: ev.ID, MessageID: "m-a", PayloadHash: ev.PayloadHash()}, errors.New("failed 5 times")); err != nil {
		t.Fatal(err)
	}
	if err := engineOf(c).HoldMessages(ctx, "group-1", []holdlist.Held{{EventID: counter + "-b", MessageID: "m-b"}, {MessageID: "m-a2"}}); err != nil {
		t.Fatal(err)
	}
	if err := engineOf(c).HoldGroup(ctx, "group-1", holdlist.Held{EventID: ev.ID, MessageID: "m-a2", PayloadHash: ev.PayloadHash()}, errors.New("failed 5 times")); err != nil {
		t.Fatal(err) // the re-send's entry learns its event
	}
	for _, m := range []struct{ id, suffix string }{{"m-a", "-a"}, {"m-b", "-b"}, {"m-c", "-c"}} {
		if res, err := applytest.Process(ctx, c, msg(m.id, m.suffix)); err != nil || res.Outcome != idempotency.Applied {
			t.Fatalf("%s = %+v, %v; want applied, in order", m.suffix, res, err)
		}
	}
	if got := f.Counter(t, counter); got != 3 {
		t.Errorf("counter = %d; want 3", got)
	}
}
