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
	"github.com/onceflow/onceflow/internal/testenv"
	"github.com/onceflow/onceflow/pkg/claimcheck"
)

// The ledger wired as its main wires it, with PAYLOAD_BUCKET set, reads events that a producer
// put in the bucket behind pointers, and the same events sent inline afterwards are
// duplicates: the balances are those of the sample batch applied once.
func TestLedger_reads_claim_checks_from_its_payload_bucket(t *testing.T) {
	s := newSystem(t)
	s3c := testenv.S3(t)
	bucket := testenv.Bucket(t, s3c, "payloads")
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
	s3c := testenv.S3(t)
	mine, other := testenv.Bucket(t, s3c, "payloads"), testenv.Bucket(t, s3c, "elsewhere")
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
