package deadletter

import (
	"errors"
	"strings"

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

// WithEvent is WithEventID of ev's id, also carrying ev's payload hashes (its PayloadHash,
// and its LegacyPayloadHash when that differs): DeadLetter writes them on the letter
// (AttrPayloadHash, Letter.PayloadHashes), so that a discard records the event with the hash
// its consumer's own decoder gave it, whatever the body's shape.
func WithEvent(reason error, ev cloudevent.Event) error {
	if reason == nil || ev.ID == "" {
		return reason
	}
	hashes := []string{ev.PayloadHash()}
	if legacy := ev.LegacyPayloadHash(); legacy != hashes[0] {
		hashes = append(hashes, legacy)
	}
	return &eventIDError{err: reason, id: ev.ID, hashes: strings.Join(hashes, " ")}
}

type eventIDError struct {
	err    error
	id     string
	hashes string // space-separated, "" when unknown
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

// payloadHashesOf is the payload hashes reason carries (WithEvent), space-separated.
func payloadHashesOf(reason error) string {
	var e *eventIDError
	if errors.As(reason, &e) {
		return e.hashes
	}
	return ""
}
