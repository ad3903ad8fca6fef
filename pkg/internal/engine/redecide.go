package engine

import (
	"errors"
	"fmt"
	"time"

	"github.com/onceflow/onceflow/pkg/metrics"
)

// DefaultRedecisions is how many times an event is decided again by default when an item its
// handler read changed before the commit.
const DefaultRedecisions = 3

// ErrReadChanged is matched by a ReadChangedError.
var ErrReadChanged = errors.New("an item the handler read changed before the commit")

// ReadChangedError reports that the commit found an item the handler read changed: a
// concurrent writer won. The event is decided again on what is there now; when it stays
// contended past the bound, the message fails transiently and is delivered again, never
// counted as its own failure.
type ReadChangedError struct {
	Item string // table[key] of the item read
}

func (e *ReadChangedError) Error() string {
	return fmt.Sprintf("item %s changed after the handler read it", e.Item)
}

// Is makes errors.Is(err, ErrReadChanged) true.
func (e *ReadChangedError) Is(target error) bool { return target == ErrReadChanged }

// redeciding runs once (decide an event and commit it) again while the commit finds that an
// item the handler read changed, at most Config.Redecisions times more, each counted as
// metrics.Redecided. After the last, the error is transient (ErrReadChanged): the message is
// delivered again. Same event and same state read make the same effect, so deciding again
// keeps the guarantee.
func (c *Consumer) redeciding(once func() (Result, error)) (Result, error) {
	var took time.Duration
	for n := 0; ; n++ {
		res, err := once()
		res.Commit += took
		if !errors.Is(err, ErrReadChanged) {
			return res, err
		}
		if n >= c.cfg.Redecisions {
			return res, fmt.Errorf("decided %d times, each time an item it read changed before the commit: %w", n+1, err)
		}
		took = res.Commit
		c.cfg.Metrics.Count(metrics.Redecided, 1)
	}
}
