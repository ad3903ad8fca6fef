package engine

import (
	"errors"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/onceflow/onceflow/pkg/internal/denied"
	"github.com/onceflow/onceflow/pkg/internal/holdlist"
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
// that carries an access denial (denied.Is) is never permanent, however it is marked: a
// denial is the deployment's fault, and the message is applied once the permission is granted.
func IsPermanent(err error) bool {
	var p interface{ Permanent() bool }
	return errors.As(err, &p) && p.Permanent() && !denied.Is(err)
}

type permanentError struct{ err error }

func (e *permanentError) Error() string   { return e.err.Error() }
func (e *permanentError) Unwrap() error   { return e.err }
func (e *permanentError) Permanent() bool { return true }

// ErrDecided is matched by a DecidedError.
var ErrDecided = errors.New("event decided already")

// DecidedError reports an event its consumer has decided already (applied, rejected or
// discarded, with the same payload), found where it would otherwise be counted as failed,
// held or dead-lettered (Consumer.CountMessageFailure, Consumer.HoldGroup,
// operator.Admin.Discard): it is answered from its record instead, as a duplicate, whatever
// its handler says of it now. A port acknowledges the message.
type DecidedError struct {
	Key     string
	Outcome Outcome // the stored outcome: applied, rejected or discarded
	Reason  string  // the stored reason (of a rejection, of a discard)
	record  map[string]types.AttributeValue
}

func (e *DecidedError) Error() string {
	return fmt.Sprintf("%s was %s already: answered from its record, not counted, held or dead-lettered", e.Key, e.Outcome)
}

// Is makes errors.Is(err, ErrDecided) true.
func (e *DecidedError) Is(target error) bool { return target == ErrDecided }

// ErrHeld is matched by a HeldError.
var ErrHeld = errors.New("group held behind a dead-lettered message")

// HeldError reports an event not applied because its group is held (HoldGroup) behind an
// earlier message that was dead-lettered. It is permanent: the message is dead-lettered after
// the one it is held behind, so that a redrive replays the group in order.
type HeldError struct {
	Group          string
	BlockerEventID string // empty when the blocking message had no usable event id
	BlockerMessage string // the SQS message id of the blocking message
	BlockerReason  string // why the blocking message was dead-lettered
}

func (e *HeldError) Error() string {
	blocker := fmt.Sprintf("event %q (message %s)", e.BlockerEventID, e.BlockerMessage)
	if e.BlockerEventID == "" {
		blocker = fmt.Sprintf("message %s (held before its event id was read)", e.BlockerMessage)
	}
	return fmt.Sprintf("group %s held behind %s, dead-lettered because: %s; redrive the dead-letter queue in order once the cause is fixed",
		e.Group, blocker, e.BlockerReason)
}

// Is makes errors.Is(err, ErrHeld) true.
func (e *HeldError) Is(target error) bool { return target == ErrHeld }

// Permanent reports that retrying cannot help until the group is released.
func (e *HeldError) Permanent() bool { return true }

// ErrSkipped is matched by a SkippedError.
var ErrSkipped = errors.New("skipped by an operator: holds its group no more")

// SkippedError reports a message that HoldGroup did not hold because an operator let its
// group go on past it (operator.Admin.SkipBlocker): it is dead-lettered unheld, its group
// going on.
type SkippedError struct {
	Group string
	Skip  holdlist.Decision
}

func (e *SkippedError) Error() string {
	return fmt.Sprintf("not held: %s was skipped on group %s by %s at %s (%s), so it holds the group no more",
		e.Skip.Held, e.Group, e.Skip.By, e.Skip.At, e.Skip.Why)
}

// Is makes errors.Is(err, ErrSkipped) true.
func (e *SkippedError) Is(target error) bool { return target == ErrSkipped }

// ErrLeaseLost is matched by a LeaseLostError.
var ErrLeaseLost = errors.New("lease lost")

// LeaseLostError reports that this owner no longer holds the lease on a record when it tried
// to complete, release or extend it: the lease expired and another owner took the record
// over, or the record is gone. Nothing was written. The side effect may have run; the
// message is failed (not dead-lettered) so a redelivery finds the new owner's outcome.
type LeaseLostError struct {
	Key    string
	Owner  string // this owner's token
	Holder string // the owner that holds the record now; empty when there is none
	Op     string // complete, release or heartbeat
}

func (e *LeaseLostError) Error() string {
	holder := e.Holder
	if holder == "" {
		holder = "nobody"
	}
	return fmt.Sprintf("lease lost: %s of %s by owner %s refused, the record is held by %s; the lease was too short for the effect, lengthen it or add a heartbeat",
		e.Op, e.Key, short(e.Owner), short(holder))
}

// Is makes errors.Is(err, ErrLeaseLost) true.
func (e *LeaseLostError) Is(target error) bool { return target == ErrLeaseLost }

// ErrLeaseHeld is matched by a LeaseHeldError.
var ErrLeaseHeld = errors.New("lease held by another owner")

// LeaseHeldError reports that another owner holds a live lease on the record: the event is
// being processed elsewhere right now. It is not permanent: the message is failed so SQS
// delivers it again later, when the other owner has completed (a duplicate then) or released
// or lost the lease (processed then).
type LeaseHeldError struct {
	Key    string
	Holder string
	Until  time.Time // when the holder's lease expires unless extended
}

func (e *LeaseHeldError) Error() string {
	return fmt.Sprintf("%s is in progress under owner %s until %s; retry later", e.Key, short(e.Holder), e.Until.UTC().Format(time.RFC3339Nano))
}

// Is makes errors.Is(err, ErrLeaseHeld) true.
func (e *LeaseHeldError) Is(target error) bool { return target == ErrLeaseHeld }
