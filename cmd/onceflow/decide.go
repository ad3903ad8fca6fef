package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"

	"github.com/onceflow/onceflow/pkg/deadletter"
	"github.com/onceflow/onceflow/pkg/idempotency"
	"github.com/onceflow/onceflow/pkg/operator"
	"github.com/onceflow/onceflow/pkg/operator/dlq"
)

// refused explains a conditional write refused because the item changed since it was shown:
// it prints the item as it is now (read by now), and returns an error saying nothing was done.
func refused(ctx context.Context, err error, s ioStreams, now func() (any, bool, error)) error {
	if !errors.Is(err, operator.ErrChanged) {
		return err
	}
	v, ok, rerr := now()
	switch {
	case rerr != nil:
		fmt.Fprintf(s.out, "it changed since it was shown, and reading it again failed: %v\n", rerr)
	case !ok:
		fmt.Fprintln(s.out, "it changed since it was shown: it is gone now")
	default:
		fmt.Fprintln(s.out, "it changed since it was shown; it is now:")
		printJSON(s, v)
	}
	return fmt.Errorf("refused, nothing written: %w (look again and decide on what is there now)", err)
}

// decisionFlags are what every decision takes besides the admin's flags: who and why.
type decisionFlags struct{ by, why string }

func (d *decisionFlags) register(fs *flag.FlagSet) {
	fs.Func("by", "who decides, recorded with the decision (default: the caller's identity: on AWS the ARN sts:GetCallerIdentity answers, with --local local:USER@HOST)",
		func(v string) error {
			if strings.TrimSpace(v) == "" {
				return errors.New("empty: a decision is recorded with who decided")
			}
			d.by = v
			return nil
		})
	fs.StringVar(&d.why, "why", "", "why (recorded; required)")
}

func (d *decisionFlags) check() error {
	if d.why == "" {
		return usageError("--why is required: it is recorded with the decision")
	}
	return nil
}

// who gives the decision its who: --by, else the caller's identity, else an error (nothing is
// decided by nobody).
func (d *decisionFlags) who(ctx context.Context, t *target) error {
	if d.by != "" {
		return nil
	}
	by, err := t.caller(ctx)
	if err == nil && by == "" {
		err = errors.New("who decides: the caller has no name (say who with --by)")
	}
	d.by = by
	return err
}

func holdSkip() command {
	return decisionCommand("GROUP", "skip without asking", func(q *dlqFlags, fs *flag.FlagSet) {
		fs.StringVar(&q.queue, "queue", "", "the dead-letter queue of the group's letters (URL, name or logical id): the blocker's letter is moved behind the group's other letters there, so that a redrive sends the held tail first")
	}, false, skip)
}

// decisionCommand is a command that decides on one argument (named what): with the record
// flags, who and why, --yes (yes says what it skips), and the dead-letter queue as queue
// registers it (required when needQueue; url is "" when not given).
func decisionCommand(what, yes string, queue func(*dlqFlags, *flag.FlagSet), needQueue bool,
	do func(ctx context.Context, t *target, a *operator.Admin, url, arg string, f recordFlags, d decisionFlags, s ioStreams) error,
) command {
	var (
		q dlqFlags
		f recordFlags
		d decisionFlags
	)
	return command{
		flags: func(fs *flag.FlagSet) {
			queue(&q, fs)
			f.register(fs)
			d.register(fs)
			fs.BoolVar(&f.yes, "yes", false, yes)
		},
		run: func(ctx context.Context, t *target, args []string, s ioStreams) error {
			arg, err := oneArg(args, what)
			if err != nil {
				return err
			}
			if err := d.check(); err != nil {
				return err
			}
			a, err := f.admin(t)
			if err != nil {
				return err
			}
			url := ""
			if needQueue || q.queue != "" {
				if url, err = q.url(ctx, t); err != nil {
					return err
				}
			}
			if err := d.who(ctx, t); err != nil {
				return err
			}
			fmt.Fprintf(s.out, "deciding as %s (recorded with the decision; --by names another)\n", d.by)
			return do(ctx, t, a, url, arg, f, d, s)
		},
	}
}

// movedLater is what hold skip says of a blocker whose letter is not in the dead-letter queue.
const movedLater = "if it crash-loops, SQS moves it there later, maybe before the group's others: decide it before the group's redrive (docs/runbook.md, \"Moved by the queue\")"

// skip is hold skip: the group goes on past its blocker, recorded on the hold, and the
// blocker's letter (when url names the dead-letter queue) moves behind the group's others.
func skip(ctx context.Context, t *target, a *operator.Admin, url, group string, f recordFlags, d decisionFlags, s ioStreams) error {
	h, ok, err := a.Hold(ctx, f.consumer, group)
	if err != nil || !ok {
		if err == nil {
			fmt.Fprintf(s.out, "group %s of %s is not held: nothing to skip\n", group, f.consumer)
		}
		return err
	}
	printJSON(s, h)
	blocker := h.Held[0]
	var letter *deadletter.Letter
	if url != "" {
		l, found, err := dlq.TakeWhere(ctx, t.sqs, url, func(l deadletter.Letter) bool {
			return l.GroupID == group && (l.OriginalMessage == blocker.MessageID || blocker.EventID != "" && l.EventID == blocker.EventID)
		})
		if err != nil {
			return err
		}
		if found {
			letter = &l
			defer func() {
				if letter != nil {
					dlq.Release(context.WithoutCancel(ctx), t.sqs, url, *letter)
				}
			}()
			fmt.Fprintf(s.out, "its letter in %s: %s (%s)\n", url, l.MessageID, oneLine(l.Why(), 200))
		} else {
			fmt.Fprintf(s.out, "no letter of %s in view in %s: nothing to move now; %s\n", blocker, url, movedLater)
		}
	}
	fmt.Fprintf(s.out, "Once skipped, the group goes on past %s, and gives up its order: the %d messages held behind it keep theirs and go on at once, and it holds the group no more, "+
		"whenever it comes back: redriven, it is applied out of order if it succeeds, or dead-lettered again unheld (discard it instead if it must never be applied).\n",
		blocker, len(h.Held)-1)
	switch {
	case letter != nil:
		fmt.Fprintln(s.out, "Its letter is moved behind the group's other letters, so that a redrive sends the held tail first, and it last.")
	case url == "":
		fmt.Fprintln(s.out, "Its letter stays where it is (no --queue): a redrive sends it before the held tail; if it is not there yet, "+movedLater)
	}
	if !f.yes && !confirm(ctx, s, "Skip the blocker?") {
		return fmt.Errorf("not skipped")
	}
	next, err := a.SkipBlocker(ctx, h, d.by, d.why)
	if err != nil {
		return refused(ctx, err, s, func() (any, bool, error) { return a.Hold(ctx, f.consumer, group) })
	}
	if len(next.Held) == 0 {
		fmt.Fprintf(s.out, "skipped %s: group %s of %s is no longer held (the skip is kept on its hold item)\n", blocker, group, f.consumer)
	} else {
		fmt.Fprintf(s.out, "skipped %s: group %s of %s is now held behind %s, %d held\n", blocker, group, f.consumer, next.Held[0], len(next.Held))
	}
	if letter == nil {
		return nil
	}
	id, err := dlq.Requeue(ctx, t.sqs, url, *letter)
	letter = nil // sent again, and deleted (or its delete failed: the error says so)
	if err != nil {
		return fmt.Errorf("skipped, but its letter not moved: %w", err)
	}
	fmt.Fprintf(s.out, "moved its letter behind the group's other letters in %s (now message %s)\n", url, id)
	return nil
}

func dlqDiscard() command {
	return decisionCommand("ID (the letter's message id, the id it was first sent as, or its event id)", "discard without asking", (*dlqFlags).common, true, discard)
}

func discard(ctx context.Context, t *target, a *operator.Admin, url, id string, f recordFlags, d decisionFlags, s ioStreams) error {
	l, ok, err := dlq.Take(ctx, t.sqs, url, id)
	if err != nil {
		return err
	}
	if !ok {
		inView, err := lettersInView(ctx, t, url)
		if err != nil {
			return err
		}
		return notInView(id, url, inView)
	}
	kept := false
	defer func() {
		if !kept {
			dlq.Release(context.WithoutCancel(ctx), t.sqs, url, l)
		}
	}()
	if l, err = l.Resolved(ctx, t.payloads); err != nil {
		return err
	}
	if l.EventID, err = eventIDOf(ctx, a, f.consumer, l); err != nil {
		return err
	}
	printLetter(s, l)
	if l.EventID != "" {
		if rec, ok, err := a.Record(ctx, f.consumer, l.EventID); err != nil {
			return err
		} else if ok {
			fmt.Fprintf(s.out, "record of %s: ", f.consumer)
			printJSON(s, rec)
			fmt.Fprintf(s.out, "The event has a record (%s): if it is of this letter's payload, the letter is a copy of a decided event, and discarding deletes it, recording nothing.\n", rec.Outcome)
		}
	}
	if err := showGroup(ctx, a, f.consumer, l.GroupID, s); err != nil {
		return err
	}
	switch {
	case l.EventID == "" && l.GroupID != "" && l.OriginalMessage != "":
		fmt.Fprintf(s.out, "The letter has no event id (no decoder of %s reads its body): once discarded, %s records its message %s (the id it was first sent as, in group %s) as discarded, so that message delivered again is answered, never held (the same body sent as a new message is dead-lettered again), the group's messages held behind it go on in order, and the letter is deleted.\n",
			f.consumer, f.consumer, l.OriginalMessage, l.GroupID)
	case l.EventID == "":
		fmt.Fprintf(s.out, "The letter has no event id (no decoder of %s reads its body) and no group: once discarded, nothing is recorded and the letter is deleted.\n", f.consumer)
	default:
		fmt.Fprintf(s.out, "Once discarded, %s records event %s as discarded (a redelivery is answered, never applied; the body and attributes are kept in the record), the group's messages held behind it go on in order, and the letter is deleted.\n",
			f.consumer, l.EventID)
	}
	if !f.yes && !confirm(ctx, s, "Discard this letter?") {
		return fmt.Errorf("not discarded")
	}
	attrs := map[string]string{}
	for name, v := range l.Attributes {
		attrs[name] = aws.ToString(v.StringValue)
	}
	if l.TraceHeader != "" {
		attrs["AWSTraceHeader"] = l.TraceHeader
	}
	rec, err := a.Discard(ctx, operator.Discard{Consumer: f.consumer, EventID: l.EventID, MessageID: l.OriginalMessage, Group: l.GroupID,
		Body: l.Body, PayloadHash: l.PayloadHash, Attributes: attrs, By: d.by, Why: d.why})
	var decided *operator.DecidedError
	if err != nil && !errors.As(err, &decided) {
		return refused(ctx, err, s, func() (any, bool, error) { return a.Record(ctx, f.consumer, l.EventID) })
	}
	switch {
	case decided != nil:
		fmt.Fprintf(s.out, "%s was %s already (%s): nothing to record; the letter is a copy of a decided event (a redrive would only answer it as a duplicate), so it is deleted\n",
			letterName(l), decided.Outcome, rec.Key)
	case l.EventID == "" && rec.Key == "":
		fmt.Fprintln(s.out, "the letter has no event id and no group: no record written")
	case l.EventID == "":
		fmt.Fprintf(s.out, "the letter has no event id: recorded its message %s as discarded by %s (%s): a redelivery of it is answered, never held\n",
			l.OriginalMessage, d.by, rec.Key)
	case rec.Outcome == string(idempotency.Discarded):
		fmt.Fprintf(s.out, "recorded %s as discarded by %s\n", rec.Key, d.by)
	default:
		fmt.Fprintf(s.out, "kept %s (%s, another payload: a redelivery of this letter is a conflict again); the letter's copy is kept beside it (record get shows it)\n", rec.Key, rec.Outcome)
	}
	if err := dlq.Delete(ctx, t.sqs, url, l); err != nil {
		return fmt.Errorf("recorded, but the letter is still in the queue (a redrive of it is answered as a duplicate): %w", err)
	}
	kept = true
	fmt.Fprintf(s.out, "deleted letter %s from %s\n", l.MessageID, url)
	return showGroup(ctx, a, f.consumer, l.GroupID, s)
}

// showGroup shows the group's hold, for a letter that has a group.
func showGroup(ctx context.Context, a *operator.Admin, consumer, group string, s ioStreams) error {
	if group == "" {
		return nil
	}
	return showHold(ctx, a, consumer, group, s)
}

// letterName names a letter's event, or its message when it has no event id.
func letterName(l deadletter.Letter) string {
	if l.EventID == "" {
		return "message " + l.OriginalMessage
	}
	return "event " + l.EventID
}
