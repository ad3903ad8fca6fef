package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"

	"github.com/aws/aws-sdk-go-v2/aws"

	"github.com/onceflow/onceflow/pkg/deadletter"
	"github.com/onceflow/onceflow/pkg/idempotency"
)

// refused explains a conditional write refused because the item changed since it was shown:
// it prints the item as it is now (read by now), and returns an error saying nothing was done.
func refused(ctx context.Context, err error, s ioStreams, now func() (any, bool, error)) error {
	if !errors.Is(err, idempotency.ErrChanged) {
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
	fs.StringVar(&d.by, "by", os.Getenv("USER"), "who decides (recorded)")
	fs.StringVar(&d.why, "why", "", "why (recorded; required)")
}

func (d *decisionFlags) check() error {
	if d.why == "" {
		return usageError("--why is required: it is recorded with the decision")
	}
	return nil
}

func holdSkip() command {
	var d decisionFlags
	return adminCommand("GROUP", func(fs *flag.FlagSet, f *recordFlags) {
		fs.BoolVar(&f.yes, "yes", false, "skip without asking")
		d.register(fs)
	}, func(ctx context.Context, a *idempotency.Admin, f *recordFlags, group string, s ioStreams) error {
		if err := d.check(); err != nil {
			return err
		}
		h, ok, err := a.Hold(ctx, f.consumer, group)
		if err != nil || !ok {
			if err == nil {
				fmt.Fprintf(s.out, "group %s of %s is not held: nothing to skip\n", group, f.consumer)
			}
			return err
		}
		printJSON(s, h)
		fmt.Fprintf(s.out, "Once skipped, the group goes on past %s: the %d messages held behind it keep their order. Its letter stays in the dead-letter queue; redriven later, it is applied out of order (discard it instead if it must never be applied).\n",
			h.Held[0], len(h.Held)-1)
		if !f.yes && !confirm(s, "Skip the blocker?") {
			return fmt.Errorf("not skipped")
		}
		next, err := a.SkipBlocker(ctx, h, d.by, d.why)
		if err != nil {
			return refused(ctx, err, s, func() (any, bool, error) { return a.Hold(ctx, f.consumer, group) })
		}
		if len(next.Held) == 0 {
			fmt.Fprintf(s.out, "skipped %s: group %s of %s is no longer held (the skip is kept on its hold item)\n", h.Held[0], group, f.consumer)
		} else {
			fmt.Fprintf(s.out, "skipped %s: group %s of %s is now held behind %s, %d held\n", h.Held[0], group, f.consumer, next.Held[0], len(next.Held))
		}
		return nil
	})
}

func dlqDiscard() command {
	var (
		q dlqFlags
		f recordFlags
		d decisionFlags
	)
	return command{
		flags: func(fs *flag.FlagSet) {
			q.common(fs)
			f.register(fs)
			d.register(fs)
			fs.BoolVar(&f.yes, "yes", false, "discard without asking")
		},
		run: func(ctx context.Context, t *target, args []string, s ioStreams) error {
			id, err := oneArg(args, "MESSAGE_ID or EVENT_ID")
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
			url, err := q.url(ctx, t)
			if err != nil {
				return err
			}
			return discard(ctx, t, a, url, id, f, d, s)
		},
	}
}

func discard(ctx context.Context, t *target, a *idempotency.Admin, url, id string, f recordFlags, d decisionFlags, s ioStreams) error {
	l, ok, err := deadletter.Take(ctx, t.sqs, url, id)
	if err != nil {
		return err
	}
	if !ok {
		return fmt.Errorf("no letter %s in view in %s (a later letter of a FIFO group is not handed out before the earlier ones leave)", id, url)
	}
	kept := false
	defer func() {
		if !kept {
			deadletter.Release(context.WithoutCancel(ctx), t.sqs, url, l)
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
		}
	}
	if err := showGroup(ctx, a, f.consumer, l.GroupID, s); err != nil {
		return err
	}
	fmt.Fprintf(s.out, "Once discarded, %s records event %s as discarded (a redelivery is answered, never applied; the body and attributes are kept in the record), the group's messages held behind it go on in order, and the letter is deleted.\n",
		f.consumer, orNone(l.EventID))
	if !f.yes && !confirm(s, "Discard this letter?") {
		return fmt.Errorf("not discarded")
	}
	attrs := map[string]string{}
	for name, v := range l.Attributes {
		attrs[name] = aws.ToString(v.StringValue)
	}
	if l.TraceHeader != "" {
		attrs["AWSTraceHeader"] = l.TraceHeader
	}
	rec, err := a.Discard(ctx, idempotency.Discard{Consumer: f.consumer, EventID: l.EventID, MessageID: l.OriginalMessage, Group: l.GroupID,
		Body: l.Body, PayloadHashes: l.PayloadHashes, Attributes: attrs, By: d.by, Why: d.why})
	if err != nil {
		return refused(ctx, err, s, func() (any, bool, error) { return a.Record(ctx, f.consumer, l.EventID) })
	}
	switch {
	case l.EventID == "":
		fmt.Fprintln(s.out, "the letter has no event id: no record written")
	case rec.Outcome == string(idempotency.Discarded):
		fmt.Fprintf(s.out, "recorded %s as discarded by %s\n", rec.Key, d.by)
	default:
		fmt.Fprintf(s.out, "kept %s (%s, another payload: a redelivery of this letter is a conflict again); the letter's copy is kept beside it (record get shows it)\n", rec.Key, rec.Outcome)
	}
	if err := deadletter.Delete(ctx, t.sqs, url, l); err != nil {
		return fmt.Errorf("recorded, but the letter is still in the queue (a redrive of it is answered as a duplicate): %w", err)
	}
	kept = true
	fmt.Fprintf(s.out, "deleted letter %s from %s\n", l.MessageID, url)
	return showGroup(ctx, a, f.consumer, l.GroupID, s)
}

// showGroup shows the group's hold, for a letter that has a group.
func showGroup(ctx context.Context, a *idempotency.Admin, consumer, group string, s ioStreams) error {
	if group == "" {
		return nil
	}
	return showHold(ctx, a, consumer, group, s)
}
