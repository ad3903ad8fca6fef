package idempotency_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/onceflow/onceflow/pkg/idempotency"
	"github.com/onceflow/onceflow/pkg/internal/applytest"
	"github.com/onceflow/onceflow/pkg/internal/holdlist"
	"github.com/onceflow/onceflow/pkg/operator"
)

// A hold is not one item: a group held long enough to list more than DynamoDB's 400 KB per
// item spreads its list over pages, so that every later message is still held, after the
// others, and the list drains in its order, page after page. (It once failed the message
// with ErrHoldFull, left to the queue's redrive policy: dead-lettered unheld.) The list is
// filled with long reasons so that it passes 400 KB in a few hundred entries.
func TestHold_past_one_items_size_spreads_over_pages_and_drains_in_order(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	counter := applytest.Unique(t)
	name := "full-" + counter
	c := f.ConsumerFor(t, name, f.Router(), holding)
	const filler, live = 400, 5
	id := func(i int) string { return fmt.Sprintf("%s-%03d", counter, i) }
	if err := engineOf(c).HoldGroup(ctx, "acct", holdlist.Held{EventID: id(0), MessageID: "m-0"}, errors.New("failed 5 times: downstream throttled")); err != nil {
		t.Fatal(err)
	}
	for n := 1; n < filler; n += 50 { // 1 KB reasons, fifty a write: about 440 KB in all
		list := make([]holdlist.Held, 0, 50)
		for i := n; i < min(n+50, filler); i++ {
			list = append(list, holdlist.Held{EventID: id(i), MessageID: fmt.Sprintf("m-%d", i), Reason: strings.Repeat("r", 1000)})
		}
		if err := engineOf(c).HoldMessages(ctx, "acct", list); err != nil {
			t.Fatalf("holding entries %d to %d: %v", n, n+len(list)-1, err)
		}
	}
	for i := filler; i < filler+live; i++ { // live messages of the group, held after the list
		msg := applytest.Message(t, fmt.Sprintf("m-%d", i), id(i), "test.counted", applytest.Counted{Counter: counter, By: 1})
		msg.Attributes["MessageGroupId"] = "acct"
		if _, err := applytest.Process(ctx, c, msg); !errors.Is(err, idempotency.ErrHeld) {
			t.Fatalf("live message %d behind %d held: %v; want held (ErrHeld), never ErrHoldFull", i, i, err)
		}
	}
	a := operator.New(f.DB, f.Records)
	h, ok, err := a.Hold(ctx, name, "acct")
	if err != nil || !ok || len(h.Held) != filler+live || len(h.Pages) < 10 {
		t.Fatalf("hold: %d entries over %d pages, %v, %v; want %d over at least 10 pages", len(h.Held), len(h.Pages), ok, err, filler+live)
	}
	holdPrefix := operator.KeyPrefixes(name)[2]
	for _, k := range holdKeys(t, f, name, "acct") { // an IAM condition on the prefixes covers every page
		if !strings.HasPrefix(k, holdPrefix) {
			t.Errorf("hold item %q is not under the hold prefix %q", k, holdPrefix)
		}
	}
	for i, e := range h.Held {
		if e.EventID != id(i) {
			t.Fatalf("entry %d is %s; want %s: the list in the group's order", i, e, id(i))
		}
	}

	// The redrive: each comes back in order, the head each time, across the pages.
	for i := range filler + live {
		msg := applytest.Redelivered(applytest.Message(t, fmt.Sprintf("m-%d", i), id(i), "test.counted", applytest.Counted{Counter: counter, By: 1}), 6)
		msg.Attributes["MessageGroupId"] = "acct"
		if res, err := applytest.Process(ctx, c, msg); err != nil || res.Outcome != idempotency.Applied {
			t.Fatalf("held message %d redriven = %+v, %v; want applied, in order", i, res, err)
		}
	}
	if got := f.Counter(t, counter); got != filler+live {
		t.Errorf("counter = %d; want %d, each held message once", got, filler+live)
	}
	if left := len(holdKeys(t, f, name, "acct")); left != 0 {
		t.Errorf("%d items of the hold left after its list drained; want none (its pages deleted with it)", left)
	}
}

// A producer's re-send of the blocker's event, listed by the backstop by its own message id
// only, on one of the hold's pages: its commit (the head's event) takes the head off and its own
// entry with it, so that nothing is left held behind a message already applied.
func TestHold_a_resend_of_the_head_listed_on_a_page_leaves_with_it(t *testing.T) {
	t.Parallel()
	const filler = 80
	f, c, name, counter, id, list := heldBehindHead(t, "resent-", filler)
	ctx := context.Background()
	list = append(list[:filler-1], holdlist.Held{MessageID: "m-resent"}, list[filler-1]) // by message id: not decoded yet
	if err := engineOf(c).HoldMessages(ctx, "acct", list); err != nil {
		t.Fatal(err)
	}
	a := operator.New(f.DB, f.Records)
	if h, ok, err := a.Hold(ctx, name, "acct"); err != nil || !ok || len(h.Pages) == 0 || len(h.Held) != filler+2 {
		t.Fatalf("hold: %d entries over %d pages, %v, %v; want %d over pages", len(h.Held), len(h.Pages), ok, err, filler+2)
	}

	commitResend(t, c, counter, id(0))
	h, ok, err := a.Hold(ctx, name, "acct")
	if err != nil || !ok || len(h.Held) != filler || h.Held[0].EventID != id(1) {
		t.Fatalf("after the re-send: %d held, head %s, %v, %v; want the %d others, head %s", len(h.Held), h.BlockerEventID, ok, err, filler, id(1))
	}
	for _, e := range h.Held {
		if e.MessageID == "m-resent" {
			t.Fatalf("the re-send's own entry is still listed (%+v): the group would stay held behind an applied message", e)
		}
	}
	for i := 1; i <= filler; i++ { // the rest, redriven in order, drains the hold
		msg := applytest.Redelivered(applytest.Message(t, fmt.Sprintf("m-%d", i), id(i), "test.counted", applytest.Counted{Counter: counter, By: 1}), 6)
		msg.Attributes["MessageGroupId"] = "acct"
		if res, err := applytest.Process(ctx, c, msg); err != nil || res.Outcome != idempotency.Applied {
			t.Fatalf("held message %d redriven = %+v, %v; want applied, in order", i, res, err)
		}
	}
	if left := holdKeys(t, f, name, "acct"); len(left) != 0 {
		t.Errorf("hold items left after its list drained: %q; want none", left)
	}
	if got := f.Counter(t, counter); got != filler+1 {
		t.Errorf("counter = %d; want %d, each event once", got, filler+1)
	}
}

// holdKeys are the keys of the items of group's hold of consumer: its own and its pages.
func holdKeys(t *testing.T, f *fixture, consumer, group string) []string {
	t.Helper()
	expr, err := expression.NewBuilder().WithFilter(expression.Name("pk").BeginsWith("#hold#" + consumer + "#" + group)).Build()
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	p := dynamodb.NewScanPaginator(f.DB, &dynamodb.ScanInput{TableName: aws.String(f.Records), FilterExpression: expr.Filter(),
		ExpressionAttributeNames: expr.Names(), ExpressionAttributeValues: expr.Values(), ConsistentRead: aws.Bool(true)})
	for p.HasMorePages() {
		out, err := p.NextPage(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		for _, item := range out.Items {
			var k struct {
				PK string `dynamodbav:"pk"`
			}
			if err := attributevalue.UnmarshalMap(item, &k); err != nil {
				t.Fatal(err)
			}
			keys = append(keys, k.PK)
		}
	}
	return keys
}

// The re-send listed alone on the hold's only page, the head alone in its own item: taking the
// re-send's entry off deletes the page, and the head's commit goes on from the hold as written
// (found by review: a stale list of pages kept the commit moving a page that was gone).
func TestHold_a_resend_alone_on_the_only_page_commits_in_the_heads_place(t *testing.T) {
	t.Parallel()
	f, c, name, counter, id, fillers := heldBehindHead(t, "alone-", 40) // fill the own item: the re-send goes to a page
	ctx := context.Background()
	if err := engineOf(c).HoldMessages(ctx, "acct", append(fillers, holdlist.Held{MessageID: "m-resent"})); err != nil {
		t.Fatal(err)
	}
	a := operator.New(f.DB, f.Records)
	for _, e := range fillers { // discarded: the head alone in the own item, the re-send on a page
		if _, err := a.Discard(ctx, operator.Discard{Consumer: name, EventID: e.EventID, MessageID: e.MessageID, Group: "acct", Body: "{}"}); err != nil {
			t.Fatal(err)
		}
	}
	h, ok, err := a.Hold(ctx, name, "acct")
	if err != nil || !ok || len(h.Held) != 2 || h.Held[1].MessageID != "m-resent" || len(h.Pages) == 0 {
		t.Fatalf("hold: %+v over pages %v, %v, %v; want the head and the re-send, on a page", h.Held, h.Pages, ok, err)
	}
	commitResend(t, c, counter, id(0))
	if left := holdKeys(t, f, name, "acct"); len(left) != 0 {
		t.Errorf("hold items left: %q; want none", left)
	}
}

// heldBehindHead makes a HoldGroup consumer (named prefix and the test's counter) whose group
// acct is held behind event id(0), message m-0, and returns it with n entries of 1 KB reasons,
// not held yet (events id(1) to id(n), messages m-1 to m-n), to fill the hold's items with.
func heldBehindHead(t *testing.T, prefix string, n int) (f *fixture, c *idempotency.Consumer, name, counter string, id func(int) string, fillers []holdlist.Held) {
	t.Helper()
	f = newFixture(t)
	counter = applytest.Unique(t)
	name = prefix + counter
	c = f.ConsumerFor(t, name, f.Router(), holding)
	id = func(i int) string { return fmt.Sprintf("%s-%03d", counter, i) }
	if err := engineOf(c).HoldGroup(context.Background(), "acct", holdlist.Held{EventID: id(0), MessageID: "m-0"}, errors.New("failed 5 times")); err != nil {
		t.Fatal(err)
	}
	for i := 1; i <= n; i++ {
		fillers = append(fillers, holdlist.Held{EventID: id(i), MessageID: fmt.Sprintf("m-%d", i), Reason: strings.Repeat("r", 1000)})
	}
	return f, c, name, counter, id, fillers
}

// commitResend delivers m-resent, a producer's re-send of the head's event (eventID) to group
// acct, and wants it applied in the head's place.
func commitResend(t *testing.T, c *idempotency.Consumer, counter, eventID string) {
	t.Helper()
	resent := applytest.Message(t, "m-resent", eventID, "test.counted", applytest.Counted{Counter: counter, By: 1})
	resent.Attributes["MessageGroupId"] = "acct"
	if res, err := applytest.Process(context.Background(), c, resent); err != nil || res.Outcome != idempotency.Applied {
		t.Fatalf("the head's re-send = %+v, %v; want applied, in the head's place", res, err)
	}
}
