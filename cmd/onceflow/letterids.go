package main

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/onceflow/onceflow/pkg/deadletter"
	"github.com/onceflow/onceflow/pkg/operator/dlq"
)

// maxListed is how many of the letters in view the error of an id that names none lists.
const maxListed = 20

// findLetter returns the letter in view in url that id names (dlq.Named), leaving every letter
// where it is; when none does, the error lists the letters in view by their ids.
func findLetter(ctx context.Context, t *target, url, id string) (deadletter.Letter, error) {
	named := dlq.Named(id)
	var found *deadletter.Letter
	var seen []deadletter.Letter
	err := dlq.Browse(ctx, t.sqs, url, func(l deadletter.Letter) bool {
		if named(l) {
			found = &l
			return false
		}
		seen = append(seen, l)
		return true
	})
	switch {
	case err != nil:
		return deadletter.Letter{}, err
	case found == nil:
		return deadletter.Letter{}, notInView(id, url, seen)
	}
	return *found, nil
}

// notInView is the error of id, which none of the letters in view in url has: it lists them,
// each by the ids it answers to.
func notInView(id, url string, inView []deadletter.Letter) error {
	var b strings.Builder
	fmt.Fprintf(&b, "no letter in view in %s has the id %s (a letter answers to its message id, the id it was first sent as and its event id; "+
		"a later letter of a FIFO group is not handed out before the earlier ones leave)", url, id)
	if len(inView) == 0 {
		b.WriteString(": no letter is in view")
		return errors.New(b.String())
	}
	fmt.Fprintf(&b, "; in view:")
	for i, l := range inView {
		if i == maxListed {
			fmt.Fprintf(&b, "\n  and %d more (dlq list shows them)", len(inView)-i)
			break
		}
		b.WriteString("\n  " + letterIDs(l))
	}
	return errors.New(b.String())
}

// letterIDs is a letter's ids, as dlq list prints them: its message id in the dead-letter
// queue, the id it was first sent as (hold get's messageId), its event id, and its group.
func letterIDs(l deadletter.Letter) string {
	return fmt.Sprintf("%s  sent as %s  event %s  group %s", l.MessageID, orNone(l.OriginalMessage), orNone(l.EventID), orNone(l.GroupID))
}

// lettersInView returns the letters in view in url, leaving them where they are.
func lettersInView(ctx context.Context, t *target, url string) ([]deadletter.Letter, error) {
	var seen []deadletter.Letter
	err := dlq.Browse(ctx, t.sqs, url, func(l deadletter.Letter) bool { seen = append(seen, l); return true })
	return seen, err
}
