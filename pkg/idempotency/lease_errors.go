package idempotency

import (
	"errors"
	"fmt"
	"time"
)

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
