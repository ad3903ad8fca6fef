package idempotency

import (
	"errors"
	"fmt"
)

// ErrInvalidEffect is matched by an EffectError.
var ErrInvalidEffect = errors.New("invalid effect")

// EffectError reports an effect that DynamoDB could never commit: too many writes, too large,
// two writes to one item, or a request DynamoDB refused as invalid (a ValidationException, for
// example a key that does not match the table's schema). It is a bug in the handler or its
// tables, not in the message: the message is dead-lettered with this error as its reason so it
// can be replayed once the cause is fixed.
type EffectError struct {
	EventType string
	Problem   string
}

func (e *EffectError) Error() string {
	return fmt.Sprintf("invalid effect for %s: %s; fix the handler (or the tables it writes), then redrive the message", e.EventType, e.Problem)
}

// Is makes errors.Is(err, ErrInvalidEffect) true.
func (e *EffectError) Is(target error) bool { return target == ErrInvalidEffect }

// Permanent reports that retrying cannot help (the batch processor dead-letters the message).
func (e *EffectError) Permanent() bool { return true }

// ErrConflict is matched by a ConflictError.
var ErrConflict = errors.New("event id reused with another payload")

// ConflictError reports an event id that was processed before with a different payload: the
// producer reused an id for another event. It is never treated as a duplicate.
type ConflictError struct {
	Key         string
	StoredHash  string
	PayloadHash string
}

func (e *ConflictError) Error() string {
	return fmt.Sprintf("event id reused with another payload: record %s has payload hash %s, this message %s; the producer must give each event its own id",
		e.Key, short(e.StoredHash), short(e.PayloadHash))
}

// Is makes errors.Is(err, ErrConflict) true.
func (e *ConflictError) Is(target error) bool { return target == ErrConflict }

// Permanent reports that retrying cannot help (the batch processor dead-letters the message).
func (e *ConflictError) Permanent() bool { return true }

func short(h string) string {
	if len(h) > 12 {
		return h[:12]
	}
	return h
}
