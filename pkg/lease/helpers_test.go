package lease_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/onceflow/onceflow/pkg/cloudevent"
	"github.com/onceflow/onceflow/pkg/idempotency"
	"github.com/onceflow/onceflow/pkg/internal/applytest"
	"github.com/onceflow/onceflow/pkg/lease"
)

// errProcessDied is what a crashed process's DynamoDB calls return: none of them lands.
var errProcessDied = errors.New("the process died")

// crashingDB passes calls to DynamoDB until die is called, and fails every call after,
// as if the process had died: a record it claimed stays in progress under its lease.
type crashingDB struct {
	idempotency.DB
	dead atomic.Bool
}

func (d *crashingDB) die() { d.dead.Store(true) }

func (d *crashingDB) UpdateItem(ctx context.Context, in *dynamodb.UpdateItemInput, opts ...func(*dynamodb.Options)) (*dynamodb.UpdateItemOutput, error) {
	if d.dead.Load() {
		return nil, errProcessDied
	}
	return d.DB.UpdateItem(ctx, in, opts...)
}

func (d *crashingDB) DeleteItem(ctx context.Context, in *dynamodb.DeleteItemInput, opts ...func(*dynamodb.Options)) (*dynamodb.DeleteItemOutput, error) {
	if d.dead.Load() {
		return nil, errProcessDied
	}
	return d.DB.DeleteItem(ctx, in, opts...)
}

// gate is a side effect that calls the receiver and then waits until it is opened (or its
// context ends): an effect that is still running while the test acts.
type gate struct {
	r       *applytest.Receiver
	started chan struct{}
	open    chan struct{}
	stopped chan time.Time // when the effect saw its context end
	once    sync.Once
	ctx     atomic.Pointer[context.Context] // the context of its first run
}

func newGate(r *applytest.Receiver) *gate {
	return &gate{r: r, started: make(chan struct{}), open: make(chan struct{}), stopped: make(chan time.Time, 1)}
}

func (g *gate) Run(ctx context.Context, ev cloudevent.Event, key string) error {
	err := g.r.Call(ctx, ev, key)
	g.once.Do(func() { g.ctx.Store(&ctx); close(g.started) })
	select {
	case <-g.open:
		return err
	case <-ctx.Done():
		select {
		case g.stopped <- time.Now():
		default:
		}
		return errors.Join(err, context.Cause(ctx))
	}
}

// ended reports whether the context of the effect's first run has ended.
func (g *gate) ended() bool { return (*g.ctx.Load()).Err() != nil }

// minuteLeft is the context of an invocation with a minute left, as Lambda gives one: the
// completion or release after an effect has until a moment before then, however slow a
// loaded machine's DynamoDB is (without a deadline it has LeaseMargin, 2 s).
func minuteLeft(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// runHeld processes msg with c in the background, as an invocation with a minute left, its
// effect g, and returns once the effect has started; the channel receives what process
// returned.
func runHeld(t *testing.T, c *lease.Consumer, g *gate, msg events.SQSMessage) <-chan error {
	done, ctx := make(chan error, 1), minuteLeft(t)
	go func() {
		_, err := applytest.Process(ctx, c, msg)
		done <- err
	}()
	<-g.started
	return done
}

// waitMoving moves clk on by step, a second apart, until done receives, and returns what it
// received; it fails the test when 30 seconds pass first.
func waitMoving(t *testing.T, clk *applytest.Clock, step time.Duration, done <-chan error) error {
	t.Helper()
	giveUp := time.After(30 * time.Second)
	for {
		clk.Advance(step)
		select {
		case err := <-done:
			return err
		case <-giveUp:
			t.Fatalf("still running after 30s (its clock at %s)", clk.Now())
			return nil
		case <-time.After(time.Second):
		}
	}
}

// roomFor is time enough for a few DynamoDB calls on this machine now: ten times the slowest
// of three reads after a first (which may open a connection), and at least a second. A test
// gives it to the calls it does not hang.
func roomFor(t *testing.T, f *applytest.Fixture) time.Duration {
	t.Helper()
	f.Record(t, "room")
	slowest := time.Duration(0)
	for range 3 {
		start := time.Now()
		f.Record(t, "room")
		slowest = max(slowest, time.Since(start))
	}
	room := max(time.Second, 10*slowest)
	t.Logf("room for the calls not hung: %v (slowest read %v)", room, slowest)
	return room
}
