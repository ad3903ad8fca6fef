package engine

import (
	"context"
	"sync"

	"github.com/onceflow/onceflow/pkg/cloudevent"
	"github.com/onceflow/onceflow/pkg/port"
)

// Pack commits the events of concurrent Apply calls together: when every member (a goroutine
// that applies events one after another, such as a worker of an SQS batch) is waiting for its
// commit, their transactions are packed into as few TransactWriteItems calls as DynamoDB's
// limits allow (100 items, 4 MB, one operation per item), so that a batch costs one round trip
// instead of one per message. Each event keeps its own outcome, record, log line and metrics,
// as if it had been applied alone; a pack DynamoDB cancels is resolved per event from its
// cancellation reasons.
//
// A Pack serves one batch. Each member calls Leave once it will apply nothing more, or the
// others wait for it.
type Pack struct {
	c       *Consumer
	alone   *LeasedConsumer // a pack that shares nothing: each Apply is the consumer's own
	mu      sync.Mutex
	members int
	waiting []*member
}

// member is one event waiting in a pack: prepared for commit, and its result once settled.
type member struct {
	p    prepared
	res  Result
	err  error
	done chan struct{}
}

// NewPack returns a pack for members goroutines applying events with c: their commits are
// shared (see Pack).
func (c *Consumer) NewPack(members int) *Pack {
	return &Pack{c: c, members: members}
}

// Apply is Consumer.Apply with the commit shared: it returns once the pack holding ev's
// transaction is settled. It must be called by a member, one event at a time.
func (k *Pack) Apply(ctx context.Context, ev cloudevent.Event, d port.Delivery) (Result, error) {
	if k.alone != nil {
		return k.alone.Apply(ctx, ev, d)
	}
	return k.c.applyOnce(ctx, ev, d, func() (Result, error) {
		return k.c.redeciding(func() (Result, error) {
			p, res, done, err := k.c.prepare(ctx, ev, d)
			if done {
				return res, err
			}
			m := &member{p: p, done: make(chan struct{})}
			k.join(ctx, m)
			<-m.done
			return m.res, m.err
		})
	})
}

// Leave says one member will apply nothing more.
func (k *Pack) Leave(ctx context.Context) {
	if k.alone != nil {
		return
	}
	k.mu.Lock()
	k.members--
	k.flushLocked(ctx)
}

func (k *Pack) join(ctx context.Context, m *member) {
	k.mu.Lock()
	k.waiting = append(k.waiting, m)
	k.flushLocked(ctx)
}

// flushLocked commits the waiting members once every member waits, in the calling goroutine,
// and unlocks k.
func (k *Pack) flushLocked(ctx context.Context) {
	if len(k.waiting) == 0 || len(k.waiting) < k.members {
		k.mu.Unlock()
		return
	}
	batch := k.waiting
	k.waiting = nil
	k.mu.Unlock()
	k.c.commitAll(ctx, batch)
}
