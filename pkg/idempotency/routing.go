package idempotency

import (
	"bytes"
	"encoding/json"

	"github.com/onceflow/onceflow/pkg/cloudevent"
)

// RouteOption changes how a Router, or one of its routes, reads events. Strict is the option.
type RouteOption func(*routing)

// routing is what the options of a Router or a route set.
type routing struct{ strict bool }

func routingOf(opts []RouteOption) routing {
	var r routing
	for _, o := range opts {
		o(&r)
	}
	return r
}

// Strict makes decoding strict. Given to Route, it makes a field of the event's data that the
// route's type does not know malformed: the message is dead-lettered. Given to NewRouter, it
// does so for every route, and makes an event of a type the router routes nowhere malformed
// instead of Ignored. Without it a consumer is a tolerant reader: a producer may add a field
// to an event, or a new event type, without stopping it.
func Strict() RouteOption { return func(r *routing) { r.strict = true } }

// decodeStrictly refuses data with a field that a T does not know; the data has been decoded
// into a T already (cloudevent.DecodeData), so that is all that can be wrong with it here.
func decodeStrictly[T any](ev cloudevent.Event) error {
	dec := json.NewDecoder(bytes.NewReader(ev.Data))
	dec.DisallowUnknownFields()
	var data T
	if err := dec.Decode(&data); err != nil {
		return cloudevent.Malformed("data", "invalid for %s (its route decodes strictly): %v", ev.Type, err)
	}
	return nil
}
