package main

import (
	"context"
	"flag"
	"fmt"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/onceflow/onceflow/pkg/deadletter"
	"github.com/onceflow/onceflow/pkg/operator/dlq"
)

// dlqFlags are the flags of the dlq subcommands.
type dlqFlags struct {
	queue, to string
	filter    dlq.Filter
	limit     int
	dryRun    bool
}

func (f *dlqFlags) common(fs *flag.FlagSet) {
	fs.StringVar(&f.queue, "queue", "", "the dead-letter queue: URL or name (a logical id with --stack or --local, e.g. LedgerDeadLetterQueue)")
}

// selection registers the queue, the filters and --limit with its default and usage.
func (f *dlqFlags) selection(fs *flag.FlagSet, limit int, usage string) {
	f.common(fs)
	fs.StringVar(&f.filter.Reason, "reason", "", "only letters whose reason contains this text (case-insensitive)")
	fs.StringVar(&f.filter.EventType, "type", "", "only letters of this event type")
	fs.StringVar(&f.filter.Group, "group", "", "only letters of this message group (an account)")
	fs.IntVar(&f.limit, "limit", limit, usage)
}

func (f *dlqFlags) url(ctx context.Context, t *target) (string, error) {
	if f.queue == "" {
		return "", usageError("--queue is required")
	}
	return t.queueURL(ctx, f.queue)
}

func dlqList() command {
	var f dlqFlags
	return command{
		flags: func(fs *flag.FlagSet) {
			f.selection(fs, 100, "show at most this many letters (0: all)")
		},
		run: func(ctx context.Context, t *target, args []string, s ioStreams) error {
			url, err := f.url(ctx, t)
			if err != nil {
				return err
			}
			n, err := depth(ctx, t.sqs, url)
			if err != nil {
				return err
			}
			fmt.Fprintf(s.out, "%s: %s\n", url, n)
			shown := 0
			err = dlq.Browse(ctx, t.sqs, url, func(l deadletter.Letter) bool {
				if f.filter.EventType != "" && l.Offloaded { // its type is in its body, in S3
					if r, err := l.Resolved(ctx, t.payloads); err == nil {
						l = r
					}
				}
				if f.filter.Match(l) {
					shown++
					// The line's fields keep their order (scripts read it: infra/workload's drill),
					// the id the letter was first sent as last.
					fmt.Fprintf(s.out, "%s  event %s  type %s  group %s  at %s  sent as %s\n    reason: %s\n",
						l.MessageID, orNone(l.EventID), orNone(l.EventType), orNone(l.GroupID), l.DeadLetteredAt,
						orNone(l.OriginalMessage), oneLine(l.Why(), 300))
					if l.Offloaded {
						fmt.Fprintf(s.out, "    body: %d bytes in S3 (a claim check: dlq show reads it)\n", l.PayloadSize)
					}
				}
				// Output that failed (its reader left) stops the list: Browse releases the letters.
				return s.failed() == nil && (f.limit == 0 || shown < f.limit)
			})
			fmt.Fprintf(s.out, "%d shown (on a FIFO queue SQS hands out the first letters of each group only while they are in view)\n", shown)
			return err
		},
	}
}

func dlqShow() command {
	var f dlqFlags
	return command{
		flags: f.common,
		run: func(ctx context.Context, t *target, args []string, s ioStreams) error {
			if len(args) != 1 {
				return usageError("want one ID: the letter's message id, the id it was first sent as, or its event id")
			}
			url, err := f.url(ctx, t)
			if err != nil {
				return err
			}
			found, err := findLetter(ctx, t, url, args[0])
			if err != nil {
				return err
			}
			l, err := found.Resolved(ctx, t.payloads)
			if err != nil {
				return err
			}
			printLetter(s, l)
			return nil
		},
	}
}

// maxShownBody is how much of a letter's body dlq show and dlq discard print.
const maxShownBody = 4 << 10

func printLetter(s ioStreams, l deadletter.Letter) {
	for _, kv := range [][2]string{
		{"message id", l.MessageID}, {"event id", l.EventID}, {"event type", l.EventType},
		{"reason", l.Why()}, {"source queue", l.SourceQueueARN}, {"source message id", l.SourceMessage},
		{"first sent as", l.OriginalMessage},
		{"group id", l.GroupID}, {"dedup id", l.DedupID}, {"receive count", l.ReceiveCount},
		{"dead-lettered at", l.DeadLetteredAt}, {"trace header", l.TraceHeader},
		{"payload hash", l.PayloadHash}, {"claim check", l.Pointer},
	} {
		fmt.Fprintf(s.out, "%-18s %s\n", kv[0]+":", orNone(kv[1]))
	}
	body := l.Body
	if len(body) > maxShownBody {
		body = body[:maxShownBody] + fmt.Sprintf("… (%d bytes more)", len(body)-maxShownBody)
	}
	fmt.Fprintf(s.out, "body (%d bytes):\n%s\n", len(l.Body), body)
}

func dlqRedrive() command {
	var f dlqFlags
	return command{
		flags: func(fs *flag.FlagSet) {
			f.selection(fs, 0, "move at most this many letters (0: all)")
			fs.StringVar(&f.to, "to", "", "send every letter to this queue (default: a stream consumer's to its replay queue, the stack's "+outputReplays+"; else each to the queue it was dead-lettered from, one SQS moved to the dead-letter queue's source)")
			fs.BoolVar(&f.dryRun, "dry-run", false, "say what would be moved, move nothing")
		},
		run: func(ctx context.Context, t *target, args []string, s ioStreams) error {
			url, err := f.url(ctx, t)
			if err != nil {
				return err
			}
			cfg := dlq.RedriveConfig{Client: t.sqs, Queue: url, Filter: f.filter, Limit: f.limit, DryRun: f.dryRun, Payloads: t.payloads}
			if f.to != "" {
				if cfg.To, err = t.queueURL(ctx, f.to); err != nil {
					return err
				}
			} else {
				// A stream consumer's letters go to its replay queue (deadletter's Replay);
				// a letter its replay queue moved by itself goes back there as its source.
				if replay, ok := t.stack.replayQueue(url); ok {
					cfg.Replay = replay
					fmt.Fprintf(s.out, "a stream consumer's dead letters: to its replay queue %s (%s %s)\n", replay, t.stack.from, outputReplays)
				}
				cfg.Source = t.sourceQueue(ctx, url, s)
			}
			counts := map[dlq.Outcome]int{}
			err = dlq.Redrive(ctx, cfg, func(r dlq.Redriven) {
				if r.Outcome == dlq.Unseen {
					counts[r.Outcome] = r.Count
					fmt.Fprintf(s.out, "unseen     about %d letters behind their group's first letter, out of view: redrive again once it has gone\n", r.Count)
					return
				}
				counts[r.Outcome]++
				line := fmt.Sprintf("%-10s %s  event %s  group %s", r.Outcome, r.Letter.MessageID, orNone(r.Letter.EventID), orNone(r.Letter.GroupID))
				if r.To != "" {
					line += "  -> " + r.To
				}
				if r.Err != nil {
					line += "\n    " + r.Err.Error()
				}
				switch r.Outcome {
				case dlq.Again:
					line += "\n    dead-lettered again after this redrive sent it: the cause is not fixed"
				case dlq.Late:
					line += "\n    came into the dead-letter queue after this redrive began: look at it (dlq list) before a redrive sends it"
				}
				fmt.Fprintln(s.out, line)
			})
			fmt.Fprintf(s.out, "moved %d, would move %d, skipped %d, behind %d, unseen %d, failed again %d, failed %d, late %d\n",
				counts[dlq.Moved], counts[dlq.WouldMove], counts[dlq.Skipped], counts[dlq.Behind],
				counts[dlq.Unseen], counts[dlq.Again], counts[dlq.Failed], counts[dlq.Late])
			if err == nil && counts[dlq.Failed] > 0 {
				err = fmt.Errorf("%d letters failed; they are still in the dead-letter queue", counts[dlq.Failed])
			}
			return err
		},
	}
}

// depth says how many messages the queue holds: visible, and in flight (received by someone
// else, back when their visibility timeout ends).
func depth(ctx context.Context, c *sqs.Client, url string) (string, error) {
	out, err := c.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{QueueUrl: aws.String(url),
		AttributeNames: []types.QueueAttributeName{types.QueueAttributeNameApproximateNumberOfMessages,
			types.QueueAttributeNameApproximateNumberOfMessagesNotVisible}})
	if err != nil {
		return "", fmt.Errorf("queue %s: %w", url, err)
	}
	return fmt.Sprintf("about %s letters visible, %s in flight (received by someone, not listed)",
		out.Attributes[string(types.QueueAttributeNameApproximateNumberOfMessages)],
		out.Attributes[string(types.QueueAttributeNameApproximateNumberOfMessagesNotVisible)]), nil
}

func orNone(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// oneLine is s on one line, cut to n bytes.
func oneLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}
