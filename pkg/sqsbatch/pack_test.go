package sqsbatch_test

import (
	"context"
	"errors"
	"maps"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/smithy-go/middleware"

	"github.com/onceflow/onceflow/pkg/batch"
	"github.com/onceflow/onceflow/pkg/idempotency"
	"github.com/onceflow/onceflow/pkg/sqsbatch"
	"github.com/onceflow/onceflow/pkg/testkit/fault"
)

// Ten messages of ten groups touching ten items share one transaction; each is applied,
// recorded and logged as if alone. Without packing they take ten.
func TestPacking_commits_a_batch_of_ten_groups_in_one_transaction(t *testing.T) {
	for _, tc := range []struct {
		name     string
		cfg      sqsbatch.Config
		standard bool
		calls    int64
	}{
		{"packed", sqsbatch.Config{}, false, 1},
		{"standard queue, packed", sqsbatch.Config{}, true, 1},
		{"opted out", sqsbatch.Config{Options: batch.Options{NoPacking: true}}, false, 10},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newPackEnv(t)
			p := e.processor(t, tc.cfg)
			batch := e.batch(t, specs("g%d/1 t.add c%d 1", 10)...)
			if tc.standard {
				for i := range batch.Records {
					batch.Records[i].EventSourceARN = standardARN
					delete(batch.Records[i].Attributes, "MessageGroupId")
				}
			}
			if failed := handleAll(t, p, batch); len(failed) > 0 {
				t.Fatalf("failed %v; want every message acknowledged", failed)
			}
			if got := e.requests.Of("TransactWriteItems"); got != tc.calls {
				t.Fatalf("%d TransactWriteItems calls; want %d", got, tc.calls)
			}
			for i := range 10 {
				if n := e.counter(t, "c"+string(rune('0'+i))); n != 1 {
					t.Fatalf("counter c%d = %d; want 1", i, n)
				}
			}
			lines := e.lines(t)
			if len(lines) != 10 {
				t.Fatalf("%d log lines; want one per message:\n%s", len(lines), e.logs)
			}
			for _, l := range lines {
				keys := slices.Sorted(maps.Keys(l))
				want := []string{"commitMs", "consumer", "durationMs", "eventId", "eventType", "idempotency_key", "level", "messageId", "msg", "outcome", "time"}
				if !slices.Equal(keys, want) || l["outcome"] != "applied" {
					t.Fatalf("log line %v; want the one-message path's fields %v, outcome applied", l, want)
				}
			}
		})
	}
}

// A pack holding a duplicate, a conflict and a rejection is cancelled; each of those is settled as it
// would be alone, and the others are committed again without them, once.
func TestPacking_settles_duplicates_conflicts_and_rejections_per_message_and_commits_the_rest(t *testing.T) {
	e := newPackEnv(t)
	p := e.processor(t, sqsbatch.Config{})
	first := e.batch(t, "a/1 t.add a 1", "b/1 t.add b 1", "full/1 t.add full 10")
	if failed := handleAll(t, p, first); len(failed) > 0 {
		t.Fatalf("first batch failed %v", failed)
	}
	e.logs.Reset()
	calls := e.requests.Of("TransactWriteItems")

	// b/1 comes again with another payload: a conflict, failed for the redrive policy.
	second := e.batch(t, "a/1 t.add a 1", "b/1 t.add b 5", "cap/1 t.capped full 1",
		"x/1 t.add x 1", "y/1 t.add y 1", "z/1 t.add z 1")
	if failed := handleAll(t, p, second); !slices.Equal(failed, []string{"b/1"}) {
		t.Fatalf("failed %v; want only the conflict b/1", failed)
	}
	want := map[string]string{"a/1": "duplicate", "b/1": "conflict", "cap/1": "rejected",
		"x/1": "applied", "y/1": "applied", "z/1": "applied"}
	if got := e.outcomes(t); !maps.Equal(got, want) {
		t.Fatalf("outcomes %v; want %v", got, want)
	}
	for name, n := range map[string]int{"a": 1, "b": 1, "full": 10, "x": 1, "y": 1, "z": 1} {
		if got := e.counter(t, name); got != n {
			t.Errorf("counter %s = %d; want %d", name, got, n)
		}
	}
	if got := e.requests.Of("TransactWriteItems") - calls; got != 2 {
		t.Errorf("%d TransactWriteItems calls; want 2 (the cancelled pack, then the rest)", got)
	}
	if got := e.requests.Of("PutItem"); got != 1 {
		t.Errorf("%d PutItem calls; want 1, the rejection's record", got)
	}
}

// Two messages touching one item never share a pack (DynamoDB allows one operation per item
// in a transaction); packs over 100 items are split.
func TestPacking_splits_packs_by_shared_items_and_by_the_100_item_limit(t *testing.T) {
	many := func(prefix string, n int) string {
		var c []string
		for i := range n {
			c = append(c, prefix+string(rune('a'+i/26))+string(rune('a'+i%26)))
		}
		return strings.Join(c, ",")
	}
	for _, tc := range []struct {
		name     string
		specs    []string
		minCalls int64
		maxCalls int64
		counters map[string]int
	}{
		{"one item in four messages", []string{"a/1 t.add same 1", "b/1 t.add same 1", "c/1 t.add same 1", "d/1 t.add same 1"},
			4, 40, map[string]int{"same": 4}},
		{"41 items each, three messages", []string{"a/1 t.add " + many("a", 40) + " 1", "b/1 t.add " + many("b", 40) + " 1",
			"c/1 t.add " + many("c", 40) + " 1"}, 2, 2, map[string]int{"aaa": 1, "bbn": 1, "cab": 1}},
		{"shared item among disjoint ones", []string{"a/1 t.add p,q 1", "b/1 t.add q,r 1", "c/1 t.add s 1"},
			2, 20, map[string]int{"p": 1, "q": 2, "r": 1, "s": 1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newPackEnv(t)
			p := e.processor(t, sqsbatch.Config{})
			if failed := handleAll(t, p, e.batch(t, tc.specs...)); len(failed) > 0 {
				t.Fatalf("failed %v; want every message acknowledged", failed)
			}
			if n := e.refused.Load(); n > 0 {
				t.Errorf("DynamoDB refused %d calls as invalid; want no pack over its limits", n)
			}
			if got := e.requests.Of("TransactWriteItems"); got < tc.minCalls || got > tc.maxCalls {
				t.Errorf("%d TransactWriteItems calls; want %d to %d", got, tc.minCalls, tc.maxCalls)
			}
			for name, n := range tc.counters {
				if got := e.counter(t, name); got != n {
					t.Errorf("counter %s = %d; want %d", name, got, n)
				}
			}
		})
	}
}

// Per-group order: the second message of a group joins a pack only after the first is done.
func TestPacking_packs_the_next_message_of_each_group_in_order(t *testing.T) {
	e := newPackEnv(t)
	p := e.processor(t, sqsbatch.Config{})
	// Each group fills its counter to 10 and then one more, which must be rejected: if the
	// second message ran first it would be applied and the first rejected.
	ev := e.batch(t, "a/1 t.capped a 10", "b/1 t.capped b 10", "a/2 t.capped a 1", "b/2 t.capped b 1")
	if failed := handleAll(t, p, ev); len(failed) > 0 {
		t.Fatalf("failed %v", failed)
	}
	want := map[string]string{"a/1": "applied", "b/1": "applied", "a/2": "rejected", "b/2": "rejected"}
	if got := e.outcomes(t); !maps.Equal(got, want) {
		t.Fatalf("outcomes %v; want %v", got, want)
	}
}

// dropResponses loses the answers of the first n TransactWriteItems calls after DynamoDB
// committed them: a crash between the commit and the acknowledgement, as the Lambda sees it.
func dropResponses(n *int) func(*middleware.Stack) error {
	return func(s *middleware.Stack) error {
		return s.Finalize.Add(middleware.FinalizeMiddlewareFunc("DropResponse",
			func(ctx context.Context, in middleware.FinalizeInput, next middleware.FinalizeHandler) (middleware.FinalizeOutput, middleware.Metadata, error) {
				out, md, err := next.HandleFinalize(ctx, in)
				if err == nil && middleware.GetOperationName(ctx) == "TransactWriteItems" && *n > 0 {
					*n--
					return out, md, errors.New("connection reset after the request was sent")
				}
				return out, md, err
			}), middleware.After)
	}
}

// A pack committed whose answer was lost: each member's failure path finds its record (the
// count's check that the event is not decided) and answers it as a duplicate, counting
// nothing; a redelivery to a new environment (the Lambda's answer lost too) is all
// duplicates, in one call, with nothing applied twice.
func TestPacking_redelivery_after_a_committed_pack_is_all_duplicates(t *testing.T) {
	lost := 1
	e := newPackEnv(t, dynamodb.WithAPIOptions(dropResponses(&lost)))
	single := func(c *idempotency.Config) { c.Retry.MaxAttempts = 1 }
	batch := e.batch(t, specs("g%d/1 t.add c%d 1", 5)...)
	if failed := handleAll(t, e.processor(t, sqsbatch.Config{}, single), batch); len(failed) != 0 {
		t.Fatalf("failed %v; want all five answered from their records on their failure path (the answer was lost)", failed)
	}
	if n := strings.Count(e.logs.String(), `"stored":"applied"`); n != 5 {
		t.Errorf("%d members answered as duplicates of their applied records; want 5:\n%s", n, e.logs)
	}
	e.logs.Reset()
	calls := e.requests.Of("TransactWriteItems")
	if failed := handleAll(t, e.processor(t, sqsbatch.Config{}), batch); len(failed) > 0 {
		t.Fatalf("redelivery failed %v", failed)
	}
	for id, outcome := range e.outcomes(t) {
		if outcome != "duplicate" {
			t.Errorf("%s: %s; want duplicate", id, outcome)
		}
	}
	if got := e.requests.Of("TransactWriteItems") - calls; got != 1 {
		t.Errorf("redelivery made %d TransactWriteItems calls; want 1", got)
	}
	for i := range 5 {
		if n := e.counter(t, "c"+string(rune('0'+i))); n != 1 {
			t.Errorf("counter c%d = %d; want 1", i, n)
		}
	}
}

// A throttled pack is retried whole by the engine's Retry, within MaxAttempts: every member
// then shares its outcome, applied or failed for redelivery.
func TestPacking_retries_a_throttled_pack_within_its_attempts(t *testing.T) {
	for _, tc := range []struct {
		name      string
		throttled int64
		failed    int
		attempts  int64
	}{
		{"throttled twice, then committed", 2, 0, 3},
		{"throttled throughout, failed after MaxAttempts", 100, 5, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var attempts atomic.Int64
			e := newPackEnv(t, dynamodb.WithAPIOptions(fault.ThrottleFirstWrites("packed#", tc.throttled, &attempts))) // the commits
			p := e.processor(t, sqsbatch.Config{}, func(c *idempotency.Config) {
				c.Retry = idempotency.Retry{MaxAttempts: 3, BaseDelay: time.Millisecond, MaxDelay: 2 * time.Millisecond}
			})
			if failed := handleAll(t, p, e.batch(t, specs("g%d/1 t.add c%d 1", 5)...)); len(failed) != tc.failed {
				t.Fatalf("failed %v; want %d", failed, tc.failed)
			}
			if got := attempts.Load(); got != tc.attempts {
				t.Errorf("%d TransactWriteItems attempts; want %d (one pack, the engine's attempts only)", got, tc.attempts)
			}
			for i := range 5 {
				if n, want := e.counter(t, "c"+string(rune('0'+i))), 1-min(tc.failed, 1); n != want {
					t.Errorf("counter c%d = %d; want %d", i, n, want)
				}
			}
		})
	}
}
