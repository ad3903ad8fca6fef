package main

import (
	"context"
	"flag"
	"fmt"
	"strings"
	"time"

	"github.com/onceflow/onceflow/pkg/outbox"
	"github.com/onceflow/onceflow/pkg/publish"
)

// stringList is a repeatable flag.
type stringList []string

func (l *stringList) String() string     { return strings.Join(*l, ",") }
func (l *stringList) Set(v string) error { *l = append(*l, v); return nil }

// timeFlag is an RFC 3339 time, or a duration before now ("2h").
type timeFlag struct{ t time.Time }

func (f *timeFlag) String() string { return f.t.Format(time.RFC3339) }
func (f *timeFlag) Set(v string) error {
	if d, err := time.ParseDuration(v); err == nil {
		f.t = time.Now().Add(-d)
		return nil
	}
	t, err := time.Parse(time.RFC3339Nano, v)
	if err != nil {
		return fmt.Errorf("want an RFC 3339 time (2026-11-30T21:00:00Z) or a duration ago (2h)")
	}
	f.t = t
	return nil
}

func outboxRepublish() command {
	var (
		ids          stringList
		since, until timeFlag
		table        string
		routes       stringList
		dryRun       bool
	)
	return command{
		flags: func(fs *flag.FlagSet) {
			fs.Var(&ids, "event-id", "republish this event (repeatable)")
			fs.Var(&since, "since", "republish events written at or after this time (RFC 3339, or a duration ago: 2h)")
			fs.Var(&until, "until", "... and before this time")
			fs.StringVar(&table, "table", "", "the app table: name or logical id (default with --stack or --local: AppTable)")
			fs.Var(&routes, "route", "TYPE=QUEUE: route event type TYPE to QUEUE instead of the stack's OutboxRoutes (repeatable)")
			fs.BoolVar(&dryRun, "dry-run", false, "list what would be sent, send nothing")
		},
		run: func(ctx context.Context, t *target, args []string, s ioStreams) error {
			if len(ids) == 0 && since.t.IsZero() && until.t.IsZero() {
				return usageError("select events: --event-id, --since or --until")
			}
			name, err := t.table(table, appTable, "--table is required (the app table's name), or --stack")
			if err != nil {
				return err
			}
			rt, err := t.routes(ctx, routes)
			if err != nil {
				return err
			}
			items, err := outbox.Find(ctx, t.dynamodb, name, outbox.Selection{EventIDs: ids, Since: since.t, Until: until.t})
			if err != nil {
				return err
			}
			fmt.Fprintf(s.out, "%d outbox events selected\n", len(items))
			if dryRun {
				for _, it := range items {
					fmt.Fprintf(s.out, "would send %s  %s  subject %s  written %s -> %s\n", it.EventID, it.EventType, it.Subject, it.CreatedAt, strings.Join(rt[it.EventType], ", "))
				}
				return nil
			}
			p, err := publish.New(t.sqs, publish.Config{})
			if err != nil {
				return err
			}
			failed := 0
			for _, r := range outbox.Republish(ctx, p, rt, items) {
				if r.Err != nil {
					failed++
					fmt.Fprintf(s.out, "FAILED %s  %s  %v\n", r.Item.EventID, r.Item.EventType, r.Err)
					continue
				}
				fmt.Fprintf(s.out, "sent %s  %s  subject %s -> %s\n", r.Item.EventID, r.Item.EventType, r.Item.Subject, r.Queue)
			}
			fmt.Fprintln(s.out, "(SQS drops a send whose event id it saw on that queue in the last 5 minutes; a consumer that recorded the event skips it as a duplicate)")
			if failed > 0 {
				return fmt.Errorf("%d sends failed", failed)
			}
			return nil
		},
	}
}
