package idempotency

import (
	"context"
	"sort"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/onceflow/onceflow/pkg/cloudevent"
)

// Handler decides the effect of one event. It must be deterministic (the same event gives the
// same effect) and do no DynamoDB I/O of its own: the engine commits what it returns.
// Returning an error that matches cloudevent.ErrMalformed dead-letters the message; any other
// error fails it so SQS redelivers it. Handlers are called concurrently for different events.
type Handler interface {
	Effect(ctx context.Context, ev cloudevent.Event) (Effect, error)
}

// HandlerFunc adapts a function to Handler.
type HandlerFunc func(ctx context.Context, ev cloudevent.Event) (Effect, error)

// Effect calls f.
func (f HandlerFunc) Effect(ctx context.Context, ev cloudevent.Event) (Effect, error) {
	return f(ctx, ev)
}

// Effect is what applying an event changes in DynamoDB: Put, Update, Delete and
// ConditionCheck writes, committed in one transaction with the idempotency record. An empty
// effect is valid: the event is recorded as applied and changes nothing else.
type Effect struct {
	Writes []Write
}

// Write is one operation of an effect. Reason names the business rule that a failure of its
// condition means ("insufficient funds"); it becomes the rejection reason stored in the
// record. When it is empty the reason says which write's condition failed.
type Write struct {
	types.TransactWriteItem
	Reason string
}

// Router is a Handler that dispatches on the event type. An event of a type it has no route
// for is malformed.
type Router struct {
	routes map[string]Handler
}

// NewRouter returns an empty Router.
func NewRouter() *Router { return &Router{routes: map[string]Handler{}} }

// Route registers decide for eventType: the event's data is decoded into a T with unknown
// fields rejected and T's Validate method (if any) run, and a failure of either is malformed.
func Route[T any](r *Router, eventType string, decide func(ev cloudevent.Event, data T) (Effect, error)) {
	r.routes[eventType] = HandlerFunc(func(_ context.Context, ev cloudevent.Event) (Effect, error) {
		var data T
		if err := cloudevent.DecodeData(ev, &data); err != nil {
			return Effect{}, err
		}
		return decide(ev, data)
	})
}

// Effect dispatches ev to the handler registered for its type.
func (r *Router) Effect(ctx context.Context, ev cloudevent.Event) (Effect, error) {
	h, ok := r.routes[ev.Type]
	if !ok {
		return Effect{}, cloudevent.Malformed("type", "%q is not handled by this consumer; it handles %v", ev.Type, r.Types())
	}
	return h.Effect(ctx, ev)
}

// Types lists the event types the router handles, sorted.
func (r *Router) Types() []string {
	ts := make([]string, 0, len(r.routes))
	for t := range r.routes {
		ts = append(ts, t)
	}
	sort.Strings(ts)
	return ts
}
