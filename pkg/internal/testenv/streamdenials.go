package testenv

import (
	"errors"
	"log/slog"
	"slices"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/onceflow/onceflow/pkg/deadletter"
	"github.com/onceflow/onceflow/pkg/idempotency"
	"github.com/onceflow/onceflow/pkg/metrics"
	"github.com/onceflow/onceflow/pkg/operator"
	"github.com/onceflow/onceflow/pkg/port"
	"github.com/onceflow/onceflow/pkg/testkit"
	"github.com/onceflow/onceflow/pkg/testkit/fault"
)

// StreamPort is what StreamDenials needs of a stream port's test: a stream of records
// (DynamoDB Streams', kinesalite's) whose consumer, named "totals", appends each record's amount
// to its item's list.
type StreamPort[R any] struct {
	Write    func(t *testing.T, item string, n int) // a record of item with amount n
	Records  func(t *testing.T) []R                 // the stream's records, as Lambda delivers them
	Seq      func(R) string                         // the record's sequence number
	ID       func(R) string                         // the record's eventID
	Group    func(R) string                         // its group, the hold's name
	From     func(recs []R, seq string) []R         // the records Lambda delivers again from seq
	FailOnce func(item string, n int, err error)    // the next Decide of item's amount n fails
	Applied  func(t *testing.T, item string) []int  // the amounts applied to item, in order
	Table    string                                 // the idempotency table
	// New returns the port's handler over consumer e, dead-lettering to dl.
	New func(t *testing.T, e port.Engine, dl *deadletter.Queue) func(recs []R) []string
	// Decide is the consumer's handler.
	Decide idempotency.HandlerFunc
}

// StreamDenials checks each call of a stream port IAM may deny (the commit, counting a failed
// attempt, the hold before a dead letter, the dead-letter send): it leaves its record for
// redelivery, the response reporting its sequence number however often it comes back;
// nothing is counted against it or dead-lettered for the denial, its item is not held for it,
// and the denial is logged naming the permission and counted. Granted, the redelivery
// applies it (or, for a record that can never succeed, dead-letters it behind its held item).
// Each case runs on a port newPort makes, over a stream of its own, beside the others
// (t.Parallel): newPort must change nothing of the process.
func StreamDenials[R any](t *testing.T, newPort func(t *testing.T) StreamPort[R]) {
	tests := []struct {
		name       string
		sqs        bool // the denial is the dead-letter queue's, else DynamoDB's
		deny       fault.Deny
		amount     int // a's amount; negative can never succeed
		failing    bool
		held       bool // a held for its own reason while denied
		permission string
		want       []int // a's amounts applied once granted
	}{
		{name: "commit", deny: fault.Deny{Action: "dynamodb:UpdateItem", Prefix: "a"}, amount: 1,
			permission: "dynamodb:UpdateItem", want: []int{1}},
		{name: "count", deny: fault.Deny{Action: "dynamodb:UpdateItem", Prefix: "#attempts#totals#"}, amount: 1, failing: true,
			permission: "dynamodb:UpdateItem", want: []int{1}},
		{name: "hold write", deny: fault.Deny{Action: "dynamodb:PutItem", Prefix: "#hold#totals#"}, amount: -1,
			permission: "dynamodb:PutItem"},
		{name: "dead-letter send", sqs: true, deny: fault.Deny{Action: "sqs:SendMessage", QueryError: true}, amount: -1, held: true,
			permission: "sqs:sendmessage"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel() // a stream, tables, queues and proxies of its own
			port := newPort(t)
			port.Write(t, "a", tt.amount)
			port.Write(t, "b", 1)
			recs := port.Records(t)
			db, ddb := fault.DynamoDBDenying(t)
			sqsc, sqsDeny := fault.SQSDenying(t)
			proxy, code := ddb, "AccessDeniedException"
			if tt.sqs {
				proxy, code = sqsDeny, "AccessDenied"
			}
			proxy.Set(tt.deny)
			handle, direct, dlq, logs, emf := streamConsumer(t, port, db, sqsc)
			a := recs[0]
			seq := port.Seq(a)
			for range 7 { // more deliveries than MaxAttempts
				if tt.failing {
					port.FailOnce("a", tt.amount, errors.New("downstream timed out"))
				}
				if failed := handle(port.From(recs, seq)); !slices.Equal(failed, []string{seq}) {
					t.Fatalf("BatchItemFailures %v; want a's sequence number %s, left for redelivery", failed, seq)
				}
			}
			CheckDenied(t, logs, emf, tt.permission, code)
			admin := operator.New(testkit.DynamoDB(t), port.Table)
			if at, ok, _ := admin.Attempts(t.Context(), "totals", port.ID(a)); ok {
				t.Errorf("failed attempts %+v; want none counted for a denial", at)
			}
			if _, ok, _ := admin.Hold(t.Context(), "totals", port.Group(a)); ok != tt.held {
				t.Errorf("a held: %v; want %v", ok, tt.held)
			}
			if n := QueueDepth(t, direct, dlq); n != 0 {
				t.Errorf("%d dead letters; want none for a denial", n)
			}

			proxy.Set() // granted
			if failed := handle(port.From(recs, seq)); len(failed) != 0 {
				t.Fatalf("BatchItemFailures %v once granted; want none", failed)
			}
			if got := port.Applied(t, "a"); !slices.Equal(got, tt.want) {
				t.Errorf("a applied %v; want %v", got, tt.want)
			}
			if tt.amount < 0 && QueueDepth(t, direct, dlq) != 1 {
				t.Errorf("a, which can never succeed, not dead-lettered once granted")
			}
		})
	}
}

// streamConsumer builds the port's consumer under HoldGroup over db, dead-lettering through
// sqsc to a FIFO queue of fauxqs, logging and counting where the test reads.
func streamConsumer[R any](t *testing.T, port StreamPort[R], db *dynamodb.Client, sqsc *sqs.Client) (
	handle func([]R) []string, direct *sqs.Client, dlq string, logs *Logs, emf *EMF) {
	t.Helper()
	var logger *slog.Logger
	logger, logs = NewLogs()
	var rec *metrics.EMF
	rec, emf = NewEMF(map[string]string{"Consumer": "totals"})
	c, err := idempotency.New(db, port.Decide, idempotency.Config{Name: "totals", Table: port.Table,
		CacheSize: -1, AfterDeadLetter: idempotency.HoldGroup, Logger: logger, Metrics: rec})
	if err != nil {
		t.Fatal(err)
	}
	direct = testkit.SQS(t)
	out, err := direct.CreateQueue(t.Context(), &sqs.CreateQueueInput{QueueName: aws.String(testkit.Name("stream-dlq") + ".fifo"),
		Attributes: map[string]string{"FifoQueue": "true"}})
	if err != nil {
		t.Fatal(err)
	}
	dlq = aws.ToString(out.QueueUrl)
	return port.New(t, c.Engine(), deadletter.New(sqsc, dlq)), direct, dlq, logs, emf
}
