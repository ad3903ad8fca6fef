package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"

	"github.com/onceflow/onceflow/pkg/idempotency"
	"github.com/onceflow/onceflow/pkg/operator"
)

// recordFlags are the flags of the record and hold subcommands.
type recordFlags struct {
	consumer, table, group string
	yes                    bool
}

func (f *recordFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.consumer, "consumer", "", "the consumer's name (its CONSUMER_NAME; the stack's ConsumerNames output lists them)")
	fs.StringVar(&f.table, "table", "", "the idempotency table: name or logical id (default with --stack or --local: IdempotencyTable)")
}

func (f *recordFlags) admin(t *target) (*operator.Admin, error) {
	if f.consumer == "" {
		return nil, usageError("--consumer is required")
	}
	if err := t.stack.consumer(f.consumer); err != nil {
		return nil, err
	}
	table, err := t.table(f.table, idempotencyTable, "--table is required (the idempotency table's name), or --stack")
	if err != nil {
		return nil, err
	}
	return operator.New(t.dynamodb, table), nil
}

func oneArg(args []string, what string) (string, error) {
	if len(args) != 1 {
		return "", usageError("want one " + what)
	}
	return args[0], nil
}

// adminCommand is a record or hold subcommand: the record flags plus the ones extra
// registers, and one argument (named what in the usage error) handed to do with the
// consumer's Admin.
func adminCommand(what string, extra func(*flag.FlagSet, *recordFlags),
	do func(ctx context.Context, a *operator.Admin, f *recordFlags, arg string, s ioStreams) error,
) command {
	var f recordFlags
	return command{
		flags: func(fs *flag.FlagSet) {
			f.register(fs)
			if extra != nil {
				extra(fs, &f)
			}
		},
		run: func(ctx context.Context, t *target, args []string, s ioStreams) error {
			a, err := f.admin(t)
			if err != nil {
				return err
			}
			arg, err := oneArg(args, what)
			if err != nil {
				return err
			}
			return do(ctx, a, &f, arg, s)
		},
	}
}

// yesFlag registers --yes, which skips the confirmation question.
func yesFlag(usage string) func(*flag.FlagSet, *recordFlags) {
	return func(fs *flag.FlagSet, f *recordFlags) { fs.BoolVar(&f.yes, "yes", false, usage) }
}

func recordGet() command {
	return adminCommand("EVENT_ID", func(fs *flag.FlagSet, f *recordFlags) {
		fs.StringVar(&f.group, "group", "", "also show this group's hold (default: the record's group)")
	}, showRecord)
}

func showRecord(ctx context.Context, a *operator.Admin, f *recordFlags, id string, s ioStreams) error {
	rec, ok, err := a.Record(ctx, f.consumer, id)
	if err != nil {
		return err
	}
	fmt.Fprintf(s.out, "record %s: ", operator.Key(f.consumer, id))
	if ok {
		printJSON(s, rec)
		if rec.ExpiresAt < time.Now().Unix() {
			fmt.Fprintln(s.out, "  (expired: the engine treats it as absent)")
		}
	} else {
		fmt.Fprintln(s.out, "none: this consumer has not applied the event (or the record expired)")
	}
	if cp, ok, err := a.DiscardedCopy(ctx, f.consumer, id); err != nil {
		return err
	} else if ok {
		fmt.Fprint(s.out, "discarded letter of this event id (another payload than the record's, kept as a copy): ")
		printJSON(s, cp)
	}
	at, ok, err := a.Attempts(ctx, f.consumer, id)
	if err != nil {
		return err
	}
	fmt.Fprint(s.out, "failed attempts: ")
	if ok {
		printJSON(s, at)
	} else {
		fmt.Fprintln(s.out, "none counted")
	}
	if group := firstOf(f.group, rec.Group); group != "" {
		return showHold(ctx, a, f.consumer, group, s)
	}
	return nil
}

func recordDelete() command {
	return adminCommand("EVENT_ID", yesFlag("delete without asking"), deleteRecord)
}

func deleteRecord(ctx context.Context, a *operator.Admin, f *recordFlags, id string, s ioStreams) error {
	rec, ok, err := a.Record(ctx, f.consumer, id)
	if err != nil {
		return err
	}
	if !ok {
		fmt.Fprintf(s.out, "no record %s: nothing to delete\n", operator.Key(f.consumer, id))
		return nil
	}
	printJSON(s, rec)
	fmt.Fprintln(s.out, consequence(rec))
	if !f.yes && !confirm(ctx, s, "Delete this record and its attempt count?") {
		return fmt.Errorf("not deleted")
	}
	if err := a.DeleteRecordIf(ctx, rec); err != nil {
		return refused(ctx, err, s, func() (any, bool, error) { return a.Record(ctx, f.consumer, id) })
	}
	fmt.Fprintf(s.out, "deleted %s and its attempt count\n", operator.Key(f.consumer, id))
	return nil
}

// consequence says what a redelivery of rec's event does once rec is deleted.
func consequence(rec operator.Record) string {
	return what(rec) + "\n" + cached
}

// cached is the exception: the engine's in-memory cache of the keys an execution environment
// committed or saw (idempotency.Config.CacheSize) outlives the record.
const cached = "Except where an execution environment of the consumer still remembers the key in its in-memory cache (CacheSize, 1024 keys by default): there a redelivery is still a duplicate, until the environment ends (a deploy or configuration change of the function ends them all)."

func what(rec operator.Record) string {
	switch {
	case rec.Status == operator.StatusInProgress:
		return "This is a lease in progress: once deleted, a redelivery takes the event at once, even while its holder still runs (the side effect may happen twice; the holder's completion then fails as a lost lease)."
	case rec.Status != "":
		return "Once deleted, a redelivery of this event runs the side effect again (the downstream call gets the same idempotency key " + rec.Key + ")."
	case rec.Outcome == string(idempotency.Rejected):
		return "Once deleted, a redelivery of this event decides it again: it is applied if its conditions now hold (rejected before: " + rec.Reason + ")."
	}
	return "Once deleted, a redelivery of this event (a redrive, a republish, a resend after the 5-minute window) applies its effect AGAIN, unless the effect's own conditions refuse it."
}

func holdGet() command {
	return adminCommand("GROUP", nil, func(ctx context.Context, a *operator.Admin, f *recordFlags, group string, s ioStreams) error {
		return showHold(ctx, a, f.consumer, group, s)
	})
}

func holdRelease() command {
	return adminCommand("GROUP", yesFlag("release without asking"), releaseHold)
}

func releaseHold(ctx context.Context, a *operator.Admin, f *recordFlags, group string, s ioStreams) error {
	h, ok, err := a.Hold(ctx, f.consumer, group)
	if err != nil || !ok {
		if err == nil {
			fmt.Fprintf(s.out, "group %s of %s is not held\n", group, f.consumer)
		}
		return err
	}
	printJSON(s, h)
	fmt.Fprintf(s.out, "Once released, the group's later events are applied as they come, without the %d held messages (redrive them first to keep the order, or skip only the blocker with hold skip).\n", len(h.Held))
	if !f.yes && !confirm(ctx, s, "Release the group?") {
		return fmt.Errorf("not released")
	}
	if err := a.ReleaseHoldIf(ctx, h); err != nil {
		return refused(ctx, err, s, func() (any, bool, error) { return a.Hold(ctx, f.consumer, group) })
	}
	fmt.Fprintf(s.out, "released group %s of %s\n", group, f.consumer)
	return nil
}

func showHold(ctx context.Context, a *operator.Admin, consumer, group string, s ioStreams) error {
	h, ok, err := a.Hold(ctx, consumer, group)
	if err != nil {
		return err
	}
	fmt.Fprintf(s.out, "group %s: ", group)
	if !ok {
		fmt.Fprintln(s.out, "not held")
		for _, d := range h.Skipped {
			fmt.Fprintf(s.out, "  skipped before: %s by %s at %s: %s\n", d.Held, d.By, d.At, d.Why)
		}
		return nil
	}
	fmt.Fprint(s.out, "HELD ")
	printJSON(s, h)
	return nil
}

// printJSON prints an item as JSON under the attribute names it has in the table.
func printJSON(s ioStreams, v any) {
	var m map[string]any
	if av, err := attributevalue.MarshalMap(v); err == nil {
		_ = attributevalue.UnmarshalMap(av, &m)
	}
	b, _ := json.MarshalIndent(m, "", "  ")
	fmt.Fprintln(s.out, string(b))
}

func firstOf(a, b string) string {
	if a != "" {
		return a
	}
	return b
}
