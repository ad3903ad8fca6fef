package operator

import (
	"errors"
	"fmt"

	"github.com/onceflow/onceflow/pkg/idempotency"
	"github.com/onceflow/onceflow/pkg/internal/table"
)

// ErrChanged is matched by the error of an operator's decision refused because what it
// decides on changed since it was read (and shown): read it again, and decide on what is there
// now. The engine's own writes of a hold that kept changing match it too.
var ErrChanged = table.ErrChanged

// ErrDecided is matched by a DecidedError.
var ErrDecided = errors.New("event decided already")

// DecidedError reports a letter Admin.Discard found decided already: its consumer applied,
// rejected or discarded the letter's event, with the same payload. Nothing is recorded; the
// letter is a copy of a decided event, which a redrive would only answer as a duplicate, so the
// caller deletes it.
type DecidedError struct {
	Key     string              // the record's key
	Outcome idempotency.Outcome // the stored outcome: applied, rejected or discarded
	Reason  string              // the stored reason (of a rejection, of a discard)
}

func (e *DecidedError) Error() string {
	return fmt.Sprintf("%s was %s already: answered from its record, not counted, held or dead-lettered", e.Key, e.Outcome)
}

// Is makes errors.Is(err, ErrDecided) true.
func (e *DecidedError) Is(target error) bool { return target == ErrDecided }
