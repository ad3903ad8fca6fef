package engine

import (
	"context"
	"errors"
	"fmt"

	"github.com/onceflow/onceflow/pkg/internal/holdlist"
	"github.com/onceflow/onceflow/pkg/port"
)

// UnroutedError is what a tolerant idempotency.Router's Decide returns for an event of a type
// it routes nowhere: the consumer answers it as Ignored.
type UnroutedError struct {
	EventType string
	Types     []string // the types the router routes
}

func (e *UnroutedError) Error() string {
	return fmt.Sprintf("event type %q is routed nowhere (this consumer routes %v): ignored", e.EventType, e.Types)
}

// errNoEffect is why an event whose handler decided no effect without reading anything is
// ignored: a deterministic handler decides the same on every delivery, so there is nothing to
// write, not even a record. Decided from a read, an empty effect is recorded: the record
// pins the decision to what was read.
var errNoEffect = errors.New("its handler decided no effect, reading nothing: nothing to write")

// unrouted reports whether err says that the event's type is routed nowhere.
func unrouted(err error) bool {
	var u *UnroutedError
	return errors.As(err, &u)
}

// ignore answers an event that its handler's Router routes nowhere, or whose effect is
// nothing (why): nothing is written,
// and the message is acknowledged. A delivery that its group's hold may list (held by the
// backstop before it was decoded, or redriven: dead-lettered before, by a strict router) is
// taken off the list first, as an event answered from its record is: it holds nothing. Its own
// entries are all it takes off; a hold that does not list it is not written.
func (c *core) ignore(ctx context.Context, res Result, hash string, d port.Delivery, why error) (Result, error) {
	res.Outcome, res.Reason = Ignored, why.Error()
	if !c.mayBeListed(d) {
		return res, nil
	}
	if err := c.leave(ctx, d.Group, holdlist.Held{EventID: res.EventID, MessageID: d.OriginID(), PayloadHash: hash}, nil); err != nil {
		res.Outcome = Failed
		return res, fmt.Errorf("ignored %s, but its group %s's hold not released: %w", res.Key, d.Group, err)
	}
	return res, nil
}
