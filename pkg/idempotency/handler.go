package idempotency

import (
	"context"
	"maps"
	"slices"

	"github.com/onceflow/onceflow/pkg/cloudevent"
)

// Handler decides the effect of one event. It must be deterministic (the same event and items
// read give the same effect) and read DynamoDB only with Read: the engine commits what it
// returns, conditioned on what it read. An error marked Permanent (a
// cloudevent.MalformedError is) dead-letters the message; any other error fails it so it is
// delivered again. Handlers are called concurrently for different events.
type Handler interface {
	Decide(ctx context.Context, ev cloudevent.Event) (Effect, error)
}

// HandlerFunc adapts a function to Handler.
type HandlerFunc func(ctx context.Context, ev cloudevent.Event) (Effect, error)

// Decide calls f.
func (f HandlerFunc) Decide(ctx context.Context, ev cloudevent.Event) (Effect, error) {
	return f(ctx, ev)
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
			return nil, err
		}
		return decide(ev, data)
	})
}

// Decide dispatches ev to the handler registered for its type.
func (r *Router) Decide(ctx context.Context, ev cloudevent.Event) (Effect, error) {
	h, ok := r.routes[ev.Type]
	if !ok {
		return nil, cloudevent.Malformed("type", "%q is not handled by this consumer; it handles %v", ev.Type, r.Types())
	}
	return h.Decide(ctx, ev)
}

// Types lists the event types the router handles, sorted.
func (r *Router) Types() []string { return slices.Sorted(maps.Keys(r.routes)) }
