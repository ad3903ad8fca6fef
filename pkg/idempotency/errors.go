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
	// KeyedOn says what the consumer took the event id from, when its port knows (a decoder's
	// KeyedOn: "the CloudEvents id", "the detail's orderId, kind"), so that the reason tells
	// the producer what repeats: an id it chose, or a business key whose fields may be too
	// coarse.
	KeyedOn string
}

func (e *ConflictError) Error() string {
	if e.KeyedOn == "" {
		return fmt.Sprintf("event id reused with another payload: record %s has payload hash %s, this message %s; the producer must give each event its own id",
			e.Key, short(e.StoredHash), short(e.PayloadHash))
	}
	return fmt.Sprintf("event id reused with another payload: record %s has payload hash %s, this message %s; the consumer keys events on %s, which this message repeats for another payload: the producer must give each event its own, or the key must name more of the event",
		e.Key, short(e.StoredHash), short(e.PayloadHash), e.KeyedOn)
}

// NameKey returns err with what the consumer keyed its event on (KeyedOn) set on the
// ConflictError it carries, when keyedOn is known and err is one: a port calls it with its
// decoder's description before the event is dead-lettered.
func NameKey(err error, keyedOn string) error {
	var ce *ConflictError
	if keyedOn != "" && errors.As(err, &ce) && ce.KeyedOn == "" {
		ce.KeyedOn = keyedOn
	}
	return err
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

// Permanent marks err as permanent: no retry of the message can succeed, so it is dead-lettered
// with err as its reason (where a person finds it, to redrive once the cause is fixed) instead
// of being redelivered. This is the one rule for "never retry this": a Handler, a SideEffect or
// any sqsbatch.MessageHandler returns Permanent(err); everything else is retried. The engine's
// own permanent errors (a malformed event, a conflict, an invalid effect) follow the same rule.
func Permanent(err error) error {
	if err == nil {
		return nil
	}
	return &permanentError{err}
}

// IsPermanent reports whether err, or an error it wraps, was marked permanent: made by
// Permanent, or one of the engine's permanent errors (cloudevent.MalformedError,
// ConflictError, EffectError), which have a Permanent() bool method answering true. An error
// that carries an access denial (IsAccessDenied) is never permanent, however it is marked: a
// denial is the deployment's fault, and the message is applied once the permission is granted.
func IsPermanent(err error) bool {
	var p interface{ Permanent() bool }
	return errors.As(err, &p) && p.Permanent() && !IsAccessDenied(err)
}

type permanentError struct{ err error }

func (e *permanentError) Error() string   { return e.err.Error() }
func (e *permanentError) Unwrap() error   { return e.err }
func (e *permanentError) Permanent() bool { return true }
