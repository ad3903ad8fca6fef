package idempotency_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/aws/aws-lambda-go/events"
	"github.com/onceflow/onceflow/pkg/cloudevent"
	"github.com/onceflow/onceflow/pkg/idempotency"
	"github.com/onceflow/onceflow/pkg/internal/applytest"
	"github.com/onceflow/onceflow/pkg/internal/holdlist"
	"github.com/onceflow/onceflow/pkg/internal/testenv"
	"github.com/onceflow/onceflow/pkg/metrics"
	"github.com/onceflow/onceflow/pkg/operator"
)

// An event of a type the consumer routes nowhere (a producer's new type) is ignored: the
// message is acknowledged, nothing is written, neither an effect nor a record, not even a call
// is made; it is counted and logged once with its type. A strict router dead-letters it.
func TestConsumer_ignores_an_event_type_it_routes_nowhere(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	id := applytest.Unique(t)
	rec, emf := testenv.NewEMF(nil)
	c := f.ConsumerFor(t, "tolerant", f.Router(), func(c *idempotency.Config) { c.Metrics = rec })
	msg := applytest.Message(t, "m-1", id, "test.renamed", applytest.Counted{Counter: id, By: 1})

	before := f.Requests.Total()
	res, err := applytest.Process(ctx, c, msg)
	if err != nil || res.Outcome != idempotency.Ignored || !strings.Contains(res.Reason, `"test.renamed" is routed nowhere`) {
		t.Fatalf("Apply = %+v, %v; want ignored, saying why", res, err)
	}
	if n := f.Requests.Total() - before; n != 0 {
		t.Errorf("%d calls to DynamoDB (%s); want none", n, f.Requests)
	}
	if _, ok := f.Record(t, operator.Key("tolerant", id)); ok {
		t.Error("a record was written for an ignored event")
	}
	if err := rec.Flush(); err != nil {
		t.Fatal(err)
	}
	if n := emf.Count(metrics.Ignored); n != 1 {
		t.Errorf("%s counted %v; want 1", metrics.Ignored, n)
	}
	if logs := f.Logs.String(); strings.Count(logs, `"msg":"message ignored"`) != 1 || !strings.Contains(logs, `"eventType":"test.renamed"`) {
		t.Errorf("logs %s; want one line \"message ignored\" with the event type", logs)
	}

	strict := f.ConsumerFor(t, "strict", strictRouter(f))
	res, err = applytest.Process(ctx, strict, msg)
	var me *cloudevent.MalformedError
	if res.Outcome != idempotency.Malformed || !errors.As(err, &me) || me.Field != "type" || !idempotency.IsPermanent(err) {
		t.Errorf("strict Apply = %+v, %v; want malformed, field type", res, err)
	}
}

// strictRouter is the fixture's router of test.counted, strict.
func strictRouter(f *fixture) *idempotency.Router { return routerOf(f, idempotency.Strict()) }

// routerOf is the fixture's router of test.counted, built with opts.
func routerOf(f *fixture, opts ...idempotency.RouteOption) *idempotency.Router {
	r := idempotency.NewRouter(opts...)
	idempotency.Route(r, "test.counted", func(_ cloudevent.Event, d applytest.Counted) (idempotency.Effect, error) {
		return idempotency.Effect{f.Add(d)}, nil
	})
	return r
}

// A field of the data that the route's type does not know is ignored, unless the route (or its
// router) is strict: then the message is malformed.
func TestRoute_reads_an_added_field_unless_strict(t *testing.T) {
	ev, err := cloudevent.New("e-1", "test", "test.counted", "g", applytest.Time, map[string]any{"counter": "x", "by": 1, "coupon": "X"})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name      string
		router    func() *idempotency.Router
		malformed bool
	}{
		{"tolerant", func() *idempotency.Router { return routerOf(&fixture{&applytest.Fixture{}}) }, false},
		{"a strict route", func() *idempotency.Router {
			r := idempotency.NewRouter()
			idempotency.Route(r, "test.counted", func(cloudevent.Event, applytest.Counted) (idempotency.Effect, error) { return nil, nil }, idempotency.Strict())
			return r
		}, true},
		{"a strict router", func() *idempotency.Router { return routerOf(&fixture{&applytest.Fixture{}}, idempotency.Strict()) }, true},
		{"a strict reading route", func() *idempotency.Router {
			r := idempotency.NewRouter()
			idempotency.RouteReading(r, "test.counted", func(context.Context, cloudevent.Event, applytest.Counted) (idempotency.Effect, error) {
				return nil, nil
			}, idempotency.Strict())
			return r
		}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := tc.router().Decide(context.Background(), ev)
			var me *cloudevent.MalformedError
			if got := errors.As(err, &me); got != tc.malformed || got && (me.Field != "data" || !strings.Contains(err.Error(), `unknown field "coupon"`)) {
				t.Errorf("Decide = %v; want malformed %v", err, tc.malformed)
			}
		})
	}
}

// An ignored message holds nothing and releases nothing: a first delivery of it into a held
// group touches no hold; one the group's hold lists (dead-lettered before, by a strict router,
// and redriven) takes its own entry off, and only its own: the messages held behind it, or the
// blocker ahead of it, stay held.
func TestConsumer_an_ignored_message_takes_only_itself_off_its_groups_hold(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	counter := applytest.Unique(t)
	name := "ignore-" + counter
	c := f.ConsumerFor(t, name, f.Router(), holding)
	held := func(group string) string {
		t.Helper()
		h, _, err := operator.New(f.DB, f.Records).Hold(ctx, name, group)
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, e := range h.Held {
			ids = append(ids, e.MessageID)
		}
		return strings.Join(ids, " ")
	}
	unrouted := func(id string) holdlist.Held {
		ev, _ := cloudevent.New(counter+id, "test", "test.renamed", "group-1", applytest.Time, applytest.Counted{Counter: counter, By: 1})
		return holdlist.Held{EventID: ev.ID, MessageID: "m" + id, PayloadHash: ev.PayloadHash()}
	}
	ignored := func(msgID, id string, receiveCount int) {
		t.Helper()
		m := applytest.Message(t, msgID, counter+id, "test.renamed", applytest.Counted{Counter: counter, By: 1})
		if msgID != "m"+id {
			m = applytest.Redriven(applytest.Message(t, "m"+id, counter+id, "test.renamed", applytest.Counted{Counter: counter, By: 1}), msgID)
		}
		if res, err := applytest.Process(ctx, c, applytest.Redelivered(m, receiveCount)); err != nil || res.Outcome != idempotency.Ignored {
			t.Fatalf("%s = %+v, %v; want ignored", msgID, res, err)
		}
	}
	// u was dead-lettered as malformed behind the blocker a; b was held behind u.
	for _, e := range []holdlist.Held{{EventID: counter + "-a", MessageID: "m-a"}, unrouted("-u"), {EventID: counter + "-b", MessageID: "m-b"}} {
		if err := engineOf(c).HoldGroup(ctx, "group-1", e, errors.New("malformed")); err != nil {
			t.Fatal(err)
		}
	}
	before := f.Requests.Total()
	ignored("m-v", "-v", 1) // a first delivery into the held group
	if n := f.Requests.Total() - before; n != 0 || held("group-1") != "m-a m-u m-b" {
		t.Fatalf("a first delivery ignored: %d calls, held %s; want none, the hold as it was", n, held("group-1"))
	}
	ignored("m-u-redriven", "-u", 1) // redriven: on the list, behind a
	if got := held("group-1"); got != "m-a m-b" {
		t.Fatalf("held %s; want m-a m-b: u taken off, and u alone", got)
	}
	if _, err := applytest.Process(ctx, c, applytest.Message(t, "m-c", counter+"-c", "test.counted", applytest.Counted{Counter: counter, By: 1})); !errors.Is(err, idempotency.ErrHeld) {
		t.Fatalf("a live message after u was ignored: %v; want it held, the group still held behind a", err)
	}
	// w heads the hold of group-2, x held behind it: ignored, w is taken off and x's turn comes.
	for _, e := range []holdlist.Held{unrouted("-w"), {EventID: counter + "-x", MessageID: "m-x"}} {
		if err := engineOf(c).HoldGroup(ctx, "group-2", e, errors.New("malformed")); err != nil {
			t.Fatal(err)
		}
	}
	inGroup2 := func(m events.SQSMessage) events.SQSMessage { m.Attributes["MessageGroupId"] = "group-2"; return m }
	w := inGroup2(applytest.Redriven(applytest.Message(t, "m-w", counter+"-w", "test.renamed", applytest.Counted{Counter: counter, By: 1}), "m-w-redriven"))
	if res, err := applytest.Process(ctx, c, w); err != nil || res.Outcome != idempotency.Ignored {
		t.Fatalf("w = %+v, %v; want ignored", res, err)
	}
	if got := held("group-2"); got != "m-x" {
		t.Fatalf("group-2 holds %q; want m-x alone, its head now", got)
	}
	x := inGroup2(applytest.Redriven(applytest.Message(t, "m-x", counter+"-x", "test.counted", applytest.Counted{Counter: counter, By: 2}), "m-x-redriven"))
	if res, err := applytest.Process(ctx, c, x); err != nil || res.Outcome != idempotency.Applied {
		t.Fatalf("x = %+v, %v; want applied", res, err)
	}
	if got := held("group-2"); got != "" || f.Counter(t, counter) != 2 {
		t.Errorf("group-2 holds %q, counter %d; want nothing held, x applied alone", got, f.Counter(t, counter))
	}
}
