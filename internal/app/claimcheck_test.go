package app_test

import (
	"context"
	"io"
	"log/slog"
	"strings"
	"testing"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/onceflow/onceflow/internal/app"
	"github.com/onceflow/onceflow/internal/config"
	"github.com/onceflow/onceflow/pkg/claimcheck"
	"github.com/onceflow/onceflow/pkg/deadletter"
	"github.com/onceflow/onceflow/pkg/operator/dlq"
	"github.com/onceflow/onceflow/pkg/testkit"
)

// The ledger wired as its main wires it, with PAYLOAD_BUCKET set, reads events that a producer
// put in the bucket behind pointers, and the same events sent inline afterwards are
// duplicates: the balances are those of the sample batch applied once.
func TestLedger_reads_claim_checks_from_its_payload_bucket(t *testing.T) {
	s := newSystem(t)
	s3c := testkit.S3Client(t)
	bucket := testkit.Bucket(t, s3c, "payloads")
	ledger, err := app.NewLedger(config.Consumer{Name: "ledger", AppTable: s.app, IdempotencyTable: s.idem,
		DeadLetterQueueURL: s.ledgerDLQ, Retention: config.DefaultRetention, PayloadBucket: bucket},
		app.Deps{DynamoDB: s.db, SQS: s.sqs, S3: s3c, Logger: slog.New(slog.NewJSONHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	w, err := claimcheck.NewWriter(s3c, claimcheck.WriterConfig{Bucket: bucket})
	if err != nil {
		t.Fatal(err)
	}
	inline := sqsSample(t, "ledger-batch.json")
	pointers := events.SQSEvent{}
	for _, m := range inline.Records {
		p, err := w.Offload(context.Background(), m.Body)
		if err != nil {
			t.Fatal(err)
		}
		m.Body, m.MessageAttributes = p.Body(), map[string]events.SQSMessageAttribute{
			claimcheck.SizeAttribute: {DataType: "Number", StringValue: aws.String(claimcheck.SizeAttributeValue(len(m.Body)))}}
		pointers.Records = append(pointers.Records, m)
	}
	handle(t, ledger, pointers)
	balances := func() string {
		_, a := s.get(t, "/accounts/acc-1001")
		_, b := s.get(t, "/accounts/acc-2002")
		return a + " " + b
	}
	got := balances()
	if !strings.Contains(got, `"balance":3800`) || !strings.Contains(got, `"balance":300`) {
		t.Fatalf("accounts %s; want the sample batch's balances, 3800 and 300", got)
	}
	handle(t, ledger, inline)
	if again := balances(); again != got || len(s.items(t, s.app, "ACCOUNT#")) != 5 {
		t.Fatalf("after the same events inline: %s; want them duplicates, the accounts unchanged: %s", again, got)
	}
}

// A pointer to another bucket than PAYLOAD_BUCKET is refused: dead-lettered, nothing applied.
func TestLedger_refuses_a_pointer_to_another_bucket(t *testing.T) {
	s := newSystem(t)
	s3c := testkit.S3Client(t)
	mine, other := testkit.Bucket(t, s3c, "payloads"), testkit.Bucket(t, s3c, "elsewhere")
	ledger, err := app.NewLedger(config.Consumer{Name: "ledger", AppTable: s.app, IdempotencyTable: s.idem,
		DeadLetterQueueURL: s.ledgerDLQ, Retention: config.DefaultRetention, PayloadBucket: mine},
		app.Deps{DynamoDB: s.db, SQS: s.sqs, S3: s3c, Logger: slog.New(slog.NewJSONHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	ev := sqsSample(t, "ledger-batch.json")
	m := ev.Records[0]
	if _, err := s3c.PutObject(context.Background(), &s3.PutObjectInput{Bucket: aws.String(other), Key: aws.String("k"),
		Body: strings.NewReader(m.Body)}); err != nil {
		t.Fatal(err)
	}
	m.Body = claimcheck.Pointer{Bucket: other, Key: "k"}.Body()
	handle(t, ledger, events.SQSEvent{Records: []events.SQSMessage{m}})
	if got := s.items(t, s.app, "ACCOUNT#"); len(got) != 0 {
		t.Fatalf("app table holds %v; want nothing applied", got)
	}
}

// The ledger's letter of a message of SQS's full size, past 1 MiB with the engine's
// attributes, goes to its dead-letter queue as a claim check under the ledger's own prefix of
// the payload bucket, the one template.yaml lets it write; the letter reads back whole.
func TestLedger_dead_letters_a_letter_past_1_MiB_under_its_prefix(t *testing.T) {
	s := newSystem(t)
	s3c := testkit.S3Client(t)
	bucket := testkit.Bucket(t, s3c, "payloads")
	ledger, err := app.NewLedger(config.Consumer{Name: "ledger", AppTable: s.app, IdempotencyTable: s.idem,
		DeadLetterQueueURL: s.ledgerDLQ, Retention: config.DefaultRetention, PayloadBucket: bucket},
		app.Deps{DynamoDB: s.db, SQS: s.sqs, S3: s3c, Logger: slog.New(slog.NewJSONHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	m := sqsSample(t, "ledger-batch.json").Records[0]
	m.Body = `{"specversion":"1.0","id":"big-1","source":"test","type":"account.frozen","subject":"acc-1","data":{"pad":"` +
		strings.Repeat("x", 1<<20-300) + `"}}`
	handle(t, ledger, events.SQSEvent{Records: []events.SQSMessage{m}})
	var letters []deadletter.Letter
	if err := dlq.Browse(context.Background(), s.sqs, s.ledgerDLQ, func(l deadletter.Letter) bool { letters = append(letters, l); return true }); err != nil {
		t.Fatal(err)
	}
	if len(letters) != 1 || !letters[0].Offloaded {
		t.Fatalf("letters %d; want the one, as a claim check", len(letters))
	}
	p, _, _, err := claimcheck.Parse(events.SQSMessage{Body: letters[0].Body})
	if err != nil || p.Bucket != bucket || !strings.HasPrefix(p.Key, app.DeadLetterPrefix("ledger")) {
		t.Errorf("letter's pointer %+v, %v; want an object of %s under %s", p, err, bucket, app.DeadLetterPrefix("ledger"))
	}
	r, _ := claimcheck.NewReader(s3c, claimcheck.ReaderConfig{})
	if l, err := letters[0].Resolved(context.Background(), r); err != nil || l.Body != m.Body || l.EventID != "big-1" {
		t.Errorf("letter read back: %d bytes, event %q, %v; want the message's body", len(l.Body), l.EventID, err)
	}
}
