package idempotency

import (
	"context"
	"maps"
	"slices"

	"github.com/onceflow/onceflow/pkg/cloudevent"
	"github.com/onceflow/onceflow/pkg/internal/engine"
)

// Handler decides the effect of one event. It must be deterministic (the same event and items
// read give the same effect) and read DynamoDB only with Read: the engine commits what it
// returns, conditioned on what it read. An error marked Permanent (a cloudevent.MalformedError
// is) dead-letters the message; a Router's answer for a type it routes nowhere acknowledges it
// (Ignored); any other error fails it so it is
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
// for is Ignored: the consumer acknowledges it and writes nothing, so that a producer's new
// event type stops no consumer. A Router made with Strict answers it as malformed instead.
type Router struct {
	routes map[string]Handler
	opts   routing
}

// NewRouter returns an empty Router; Strict makes it strict (unknown types and, in every
// route, unknown data fields are malformed).
func NewRouter(opts ...RouteOption) *Router {
	return &Router{routes: map[string]Handler{}, opts: routingOf(opts)}
}

// Route registers decide for eventType: the event's data is decoded into a T and T's Validate
// method (if any) run, and a failure of either is malformed. A field of the data that T does
// not know is ignored, so that a producer may add one; with Strict (given here, or to the
// Router) it is malformed.
func Route[T any](r *Router, eventType string, decide func(ev cloudevent.Event, data T) (Effect, error), opts ...RouteOption) {
	route(r, eventType, func(_ context.Context, ev cloudevent.Event, data T) (Effect, error) { return decide(ev, data) }, opts)
}

// route registers decide for eventType, its data decoded (and, strict, checked) into a T.
func route[T any](r *Router, eventType string, decide func(ctx context.Context, ev cloudevent.Event, data T) (Effect, error), opts []RouteOption) {
	strict := r.opts.strict || routingOf(opts).strict
	r.routes[eventType] = HandlerFunc(func(ctx context.Context, ev cloudevent.Event) (Effect, error) {
		var data T
		if err := cloudevent.DecodeData(ev, &data); err != nil {
			return nil, err
		}
		if strict {
			if err := decodeStrictly[T](ev); err != nil {
				return nil, err
			}
		}
		return decide(ctx, ev, data)
	})
}

// Decide dispatches ev to the handler registered for its type. For a type it has no route for
// it returns an error the Consumer answers as Ignored, or, when the Router is strict, a
// malformed one.
func (r *Router) Decide(ctx context.Context, ev cloudevent.Event) (Effect, error) {
	h, ok := r.routes[ev.Type]
	switch {
	case !ok && r.opts.strict:
		return nil, cloudevent.Malformed("type", "%q is not handled by this consumer; it handles %v", ev.Type, r.Types())
	case !ok:
		return nil, &engine.UnroutedError{EventType: ev.Type, Types: r.Types()}
	}
	return h.Decide(ctx, ev)
}

// Types lists the event types the router handles, sorted.
func (r *Router) Types() []string { return slices.Sorted(maps.Keys(r.routes)) }
