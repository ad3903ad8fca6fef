package deadletter

import (
	"errors"

	"github.com/onceflow/onceflow/pkg/cloudevent"
)

// WithEventID returns reason carrying eventID, the id of the event the consumer decoded from
// the message: DeadLetter writes it on the letter (AttrEventID, Letter.DecodedEventID), so that
// an operator's tool names the event even when the body does not show it (a claim check's
// pointer, an envelope keyed by a business key, a stream record). The error reads and matches
// as reason.
func WithEventID(reason error, eventID string) error {
	if reason == nil || eventID == "" {
		return reason
	}
	return &eventIDError{err: reason, id: eventID}
}

// WithEvent is WithEventID of ev's id, also carrying ev's PayloadHash: DeadLetter writes it
// on the letter (AttrPayloadHash, Letter.PayloadHash), so that a discard records the event with the hash
// its consumer's own decoder gave it, whatever the body's shape.
func WithEvent(reason error, ev cloudevent.Event) error {
	if reason == nil || ev.ID == "" {
		return reason
	}
	return &eventIDError{err: reason, id: ev.ID, hash: ev.PayloadHash()}
}

type eventIDError struct {
	err  error
	id   string
	hash string // "" when unknown
}

func (e *eventIDError) Error() string { return e.err.Error() }
func (e *eventIDError) Unwrap() error { return e.err }

// eventIDOf is the event id reason carries (WithEventID), "" when none.
func eventIDOf(reason error) string {
	var e *eventIDError
	if errors.As(reason, &e) {
		return e.id
	}
	return ""
}

// payloadHashOf is the payload hash reason carries (WithEvent), "" when none.
func payloadHashOf(reason error) string {
	var e *eventIDError
	if errors.As(reason, &e) {
		return e.hash
	}
	return ""
}
