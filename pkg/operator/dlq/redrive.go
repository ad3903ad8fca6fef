package dlq

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/onceflow/onceflow/pkg/claimcheck"
	"github.com/onceflow/onceflow/pkg/deadletter"
)

// RedriveAPI is the SQS calls Redrive makes; *sqs.Client implements it.
type RedriveAPI interface {
	ReceiveAPI
	deadletter.SendMessageAPI
	DeleteMessage(ctx context.Context, params *sqs.DeleteMessageInput, optFns ...func(*sqs.Options)) (*sqs.DeleteMessageOutput, error)
	GetQueueUrl(ctx context.Context, params *sqs.GetQueueUrlInput, optFns ...func(*sqs.Options)) (*sqs.GetQueueUrlOutput, error)
	GetQueueAttributes(ctx context.Context, params *sqs.GetQueueAttributesInput, optFns ...func(*sqs.Options)) (*sqs.GetQueueAttributesOutput, error)
}

// RedriveConfig says what Redrive moves where. Client and Queue are required.
type RedriveConfig struct {
	Client RedriveAPI
	Queue  string // URL of the dead-letter queue
	// To is the URL of the queue to send every letter to; "" sends each to the queue it was
	// dead-lettered from (AttrSourceQueueARN), or to Source when it names none.
	To string
	// Replay is the URL of the replay queue of the stream consumer whose dead-letter queue this
	// is, where a stream letter (deadletter.Letter.FromStream) goes: the consumer applies it from there in
	// its key's order (batch.Replay). "" refuses a stream letter, unless To is set.
	Replay string
	// Source is the URL of the dead-letter queue's source queue (the queue whose redrive
	// policy moves messages to it), where a letter that names no source queue goes back to:
	// one SQS moved by itself. "" refuses such a letter (SourceQueue finds the source).
	Source string
	Filter Filter // which letters to move; the zero value moves every one
	Limit  int    // at most this many letters are moved; 0 for no limit
	DryRun bool   // report what would be moved, move nothing
	// Payloads reads the body of a letter DeadLetter sent as a claim check (past SQS's limit),
	// which the redrive sends as it was: inline when it fits, else still as a claim check
	// (*claimcheck.Reader; the operator's tool gives one). Nil: such a letter fails.
	Payloads claimcheck.PayloadReader
	// Visibility is how long the letters a redrive receives stay invisible to others while it
	// runs; default Hold. Letters it leaves in place that become visible again before it ends
	// (a redrive outlasting it) are recognised and not decided twice.
	Visibility time.Duration
}

// Outcome is what Redrive did with one letter.
type Outcome string

// Outcomes of one letter in a redrive.
const (
	Moved     Outcome = "moved"      // sent to its queue, then deleted from the dead-letter queue
	Skipped   Outcome = "skipped"    // not selected by the filter, or beyond the limit: left where it is
	Behind    Outcome = "behind"     // left in place behind an earlier letter of its group that was left
	Deduped   Outcome = "deduped"    // SQS dropped the send as a repeat of the original (under 5 minutes old): left in place, try again later
	Failed    Outcome = "failed"     // no destination, or the send or delete failed: left in place
	WouldMove Outcome = "would move" // DryRun: it would be moved
	Again     Outcome = "again"      // dead-lettered again after this redrive moved it: left in place
	// Late is a letter that came into the dead-letter queue after this redrive began, left in
	// place with the rest of its group: nobody has looked at it yet (docs/runbook.md).
	Late Outcome = "late"
	// Unseen is reported once, at the end, with Count: letters in the queue this redrive could
	// not see (on a FIFO queue, behind a group's head that it left in place or that another
	// reader holds). Run the redrive again once their heads are gone.
	Unseen Outcome = "unseen"
)

// Redriven is what Redrive did with one letter.
type Redriven struct {
	Letter  deadletter.Letter
	To      string // the queue URL it was (or would be) sent to
	Outcome Outcome
	Err     error // why it failed, for Failed
	Count   int   // for Unseen: how many letters (approximately: SQS's counts are)
}

// Redrive moves the selected letters of the dead-letter queue back to their source queues, in
// the dead-letter queue's order, each with its group id, its body, its own message attributes
// and trace header, and a fresh deduplication id: the original one (the event id) is likely
// under five minutes old, and SQS would drop the send; the consumer's record deduplicates by
// event id instead. It deletes a letter only after its send succeeded. Per group, order is
// kept: once a letter of a group is left in place (skipped, failed), every later letter of
// that group is left too. It sends only letters the queue held when it began: one that comes in
// while it runs is left in place with the rest of its group, for the operator to look at first
// (Late; Again when it is a message this redrive sent that failed at once, never sent twice in
// one run). It tells them by when the queue took them (deadletter.Letter.Enqueued: a letter's
// send, or SQS's move of a message to a FIFO dead-letter queue; a standard queue keeps a moved
// message's first send), by SQS's clock against this machine's: a clock ahead of SQS's by d
// also sends letters that came in within d of the start, one behind it leaves those taken
// within d before (the next redrive sends them); a letter without that time (a zero Enqueued)
// is never late. Again, Behind and Skipped are told before Late; a dry run reports Late too.
// Redrive calls report with each letter as it is decided, then once with Unseen when letters
// stayed out of its view, and returns the first error that stopped it; the letters left in
// place are visible again when it returns.
func Redrive(ctx context.Context, cfg RedriveConfig, report func(Redriven)) error {
	if cfg.Client == nil || cfg.Queue == "" {
		return errors.New("redrive: client and queue are required")
	}
	if cfg.Visibility <= 0 {
		cfg.Visibility = VisibilityHold
	}
	r := &redrive{cfg: cfg, began: time.Now(), urls: map[string]string{}, held: map[string]bool{}, sent: map[string]bool{}, seen: map[string]int{}}
	defer func() { release(context.WithoutCancel(ctx), cfg.Client, cfg.Queue, r.left) }()
	for {
		batch, err := receive(ctx, cfg.Client, cfg.Queue, cfg.Visibility)
		if err != nil {
			return err
		}
		fresh := 0
		for _, l := range batch {
			if i, ok := r.seen[l.MessageID]; ok { // one it left, visible again: keep the new handle
				if i >= 0 {
					r.left[i] = l
				}
				continue
			}
			fresh++
			report(r.one(ctx, l))
		}
		if fresh == 0 {
			break
		}
	}
	if n, err := r.unseen(ctx); err != nil {
		return err
	} else if n > 0 {
		report(Redriven{Outcome: Unseen, Count: n})
	}
	return nil
}

// unseen is how many letters the queue holds besides those this redrive holds in place.
func (r *redrive) unseen(ctx context.Context) (int, error) {
	out, err := r.cfg.Client.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{QueueUrl: aws.String(r.cfg.Queue),
		AttributeNames: []types.QueueAttributeName{types.QueueAttributeNameApproximateNumberOfMessages,
			types.QueueAttributeNameApproximateNumberOfMessagesNotVisible}})
	if err != nil {
		return 0, fmt.Errorf("count letters of %s: %w", r.cfg.Queue, err)
	}
	n := -len(r.left)
	for _, v := range out.Attributes {
		k, _ := strconv.Atoi(v)
		n += k
	}
	return max(n, 0), nil
}

type redrive struct {
	cfg   RedriveConfig
	began time.Time         // letters the dead-letter queue took since are late
	urls  map[string]string // source queue ARN → URL
	held  map[string]bool   // groups with a letter left in place
	sent  map[string]bool   // message ids of the sends of this redrive
	seen  map[string]int    // letters decided: index in left, or -1
	moved int
	left  []deadletter.Letter
}

func (r *redrive) one(ctx context.Context, l deadletter.Letter) Redriven {
	res := Redriven{Letter: l}
	switch {
	case r.sent[l.SourceMessage] || r.sent[l.MessageID]:
		// Dead-lettered again since this redrive sent it (SQS keeps a message's id when it
		// moves it, the dead-letterer names it): another send now would loop.
		res.Outcome = Again
	case l.GroupID != "" && r.held[l.GroupID]:
		res.Outcome = Behind
	case !r.cfg.Filter.Match(l) || (r.cfg.Limit > 0 && r.moved >= r.cfg.Limit):
		res.Outcome = Skipped
	case l.Enqueued.After(r.began): // SQS stamps milliseconds: one stamped in the millisecond it began counts as there before
		// Nobody looked at it before the redrive: it may be the letter of the message that
		// takes its group's batches down, which SQS moves at any moment.
		res.Outcome = Late
	default:
		res.To, res.Err = r.destination(ctx, l)
		switch {
		case res.Err != nil:
			res.Outcome = Failed
		case r.cfg.DryRun:
			res.Outcome = WouldMove
			r.moved++
		default:
			res.Outcome, res.Err = r.move(ctx, l, res.To)
		}
	}
	r.seen[l.MessageID] = -1
	if res.Outcome != Moved {
		r.seen[l.MessageID] = len(r.left)
		r.left = append(r.left, l)
		if l.GroupID != "" {
			r.held[l.GroupID] = true
		}
	}
	return res
}

// move sends l to url and deletes it from the dead-letter queue.
func (r *redrive) move(ctx context.Context, l deadletter.Letter, url string) (Outcome, error) {
	in, err := l.RedriveInput(ctx, r.cfg.Payloads, url)
	if err != nil {
		return Failed, err
	}
	if strings.HasSuffix(url, ".fifo") {
		if in.MessageGroupId == nil {
			return Failed, fmt.Errorf("letter %s has no group id for FIFO queue %s", l.MessageID, url)
		}
		// A fresh deduplication id: the original one (the event id) is likely under five
		// minutes old, and SQS would drop the send. The consumer's record deduplicates by
		// event id, so a letter sent twice is applied once.
		in.MessageDeduplicationId = aws.String(freshDedupID())
	}
	out, err := r.cfg.Client.SendMessage(ctx, in)
	if err != nil {
		return Failed, fmt.Errorf("send letter %s to %s: %w", l.MessageID, url, err)
	}
	id := aws.ToString(out.MessageId)
	if id == l.SourceMessage || id == l.MessageID {
		return Deduped, nil
	}
	r.sent[id] = true
	if _, err := r.cfg.Client.DeleteMessage(ctx, &sqs.DeleteMessageInput{QueueUrl: aws.String(r.cfg.Queue),
		ReceiptHandle: aws.String(l.ReceiptHandle)}); err != nil {
		// Sent but still here: a second redrive sends it again, which the broker drops within
		// five minutes and the consumer's record stops after.
		return Failed, fmt.Errorf("delete redriven letter %s: %w", l.MessageID, err)
	}
	r.moved++
	return Moved, nil
}

// destination is the URL of the queue l goes back to.
func (r *redrive) destination(ctx context.Context, l deadletter.Letter) (string, error) {
	if r.cfg.To != "" {
		return r.cfg.To, nil
	}
	if l.FromStream() {
		if r.cfg.Replay == "" {
			return "", fmt.Errorf("letter %s comes from the stream %s: it goes to its consumer's replay queue, which is not known (onceflow dlq redrive --to <its replay queue>; docs/ports.md)", l.MessageID, l.SourceQueueARN)
		}
		return r.cfg.Replay, nil
	}
	if l.SourceQueueARN == "" && r.cfg.Source != "" {
		return r.cfg.Source, nil
	}
	if l.SourceQueueARN == "" {
		return "", fmt.Errorf("letter %s names no source queue (SQS moved it) and the dead-letter queue's source is not known: name the queue to send it to", l.MessageID)
	}
	if url, ok := r.urls[l.SourceQueueARN]; ok {
		return url, nil
	}
	// arn:aws:sqs:<region>:<account>:<name>
	parts := strings.Split(l.SourceQueueARN, ":")
	if len(parts) != 6 {
		return "", fmt.Errorf("letter %s: source queue %q is not a queue ARN", l.MessageID, l.SourceQueueARN)
	}
	out, err := r.cfg.Client.GetQueueUrl(ctx, &sqs.GetQueueUrlInput{QueueName: aws.String(parts[5]), QueueOwnerAWSAccountId: aws.String(parts[4])})
	if err != nil {
		return "", fmt.Errorf("find source queue %s: %w", l.SourceQueueARN, err)
	}
	r.urls[l.SourceQueueARN] = aws.ToString(out.QueueUrl)
	return r.urls[l.SourceQueueARN], nil
}

// freshDedupID is a deduplication id no earlier send used.
func freshDedupID() string { return "redrive-" + rand.Text() }
