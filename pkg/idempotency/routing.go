package idempotency

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/onceflow/onceflow/pkg/cloudevent"
)

// Ignored is the outcome of an event of a type its Router routes nowhere: the message is
// acknowledged and nothing is written, neither an effect nor a record (see NewRouter).
const Ignored Outcome = "ignored"

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

// unroutedError is what a tolerant Router's Decide returns for an event of a type it routes
// nowhere: the consumer answers it as Ignored.
type unroutedError struct {
	eventType string
	types     []string
}

func (e *unroutedError) Error() string {
	return fmt.Sprintf("event type %q is routed nowhere (this consumer routes %v): ignored", e.eventType, e.types)
}

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

// ignore answers an event that its handler's Router routes nowhere (why): nothing is written,
// and the message is acknowledged. A delivery that its group's hold may list (held by the
// backstop before it was decoded, or redriven: dead-lettered before, by a strict router) is
// taken off the list first, as an event answered from its record is: it holds nothing. Its own
// entries are all it takes off; a hold that does not list it is not written.
func (c *core) ignore(ctx context.Context, res Result, hash string, d Delivery, why error) (Result, error) {
	res.Outcome, res.Reason = Ignored, why.Error()
	if !c.mayBeListed(d) {
		return res, nil
	}
	if err := c.leave(ctx, d.Group, Held{EventID: res.EventID, MessageID: d.OriginID(), PayloadHash: hash}, nil); err != nil {
		res.Outcome = Failed
		return res, fmt.Errorf("ignored %s, but its group %s's hold not released: %w", res.Key, d.Group, err)
	}
	return res, nil
}

// unrouted reports whether err says that the event's type is routed nowhere.
func unrouted(err error) bool {
	var u *unroutedError
	return errors.As(err, &u)
}
