package deadletter

import "errors"

// WithEventID returns reason carrying eventID, the id of the event the consumer decoded from
// the message: DeadLetter writes it on the letter (AttrEventID, Letter.DecodedEventID), so that
// an operator's tool names the event even when the body does not show it (a claim check's
// pointer, an envelope keyed by a business key). The error reads and matches as reason.
func WithEventID(reason error, eventID string) error {
	if reason == nil || eventID == "" {
		return reason
	}
	return &eventIDError{err: reason, id: eventID}
}

type eventIDError struct {
	err error
	id  string
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
