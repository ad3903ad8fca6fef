package idempotency

import "github.com/onceflow/onceflow/pkg/internal/engine"

// Permanent marks err as permanent: no retry of the message can succeed, so it is dead-lettered
// with err as its reason (where a person finds it, to redrive once the cause is fixed) instead
// of being redelivered. This is the one rule for "never retry this": a Handler, a
// lease.SideEffect or any sqsbatch.MessageHandler returns Permanent(err); everything else is
// retried. The engine's own permanent errors (a malformed event, a conflict, an invalid effect,
// an event held behind its group's dead letter) follow the same rule.
func Permanent(err error) error { return engine.Permanent(err) }

// IsPermanent reports whether err, or an error it wraps, was marked permanent: made by
// Permanent, or one of the engine's permanent errors (a cloudevent.MalformedError, ErrConflict,
// ErrInvalidEffect, ErrHeld), which have a Permanent() bool method answering true. A port
// dead-letters what it reports. An error that carries an access denial (AWS refused a call for
// want of a permission) is never permanent, however it is marked: a denial is the deployment's
// fault, and the message is applied once the permission is granted.
func IsPermanent(err error) bool { return engine.IsPermanent(err) }

// The engine's permanent errors, as errors.Is matches them.
var (
	// ErrConflict: an event id processed before with another payload. The producer reused an
	// id for another event; it is never treated as a duplicate.
	ErrConflict = engine.ErrConflict
	// ErrInvalidEffect: an effect DynamoDB could never commit (too many writes, too large, two
	// writes to one item, or a request DynamoDB refused as invalid). It is a bug in the handler
	// or its tables, not in the message: the message is dead-lettered so it can be redriven
	// once the cause is fixed.
	ErrInvalidEffect = engine.ErrInvalidEffect
	// ErrHeld: an event not applied because its group is held (HoldGroup) behind an earlier
	// message that was dead-lettered. The message is dead-lettered after the one it is held
	// behind, so that a redrive replays the group in order.
	ErrHeld = engine.ErrHeld
)
