package app_test

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/onceflow/onceflow/internal/app"
	"github.com/onceflow/onceflow/internal/apptest"
	"github.com/onceflow/onceflow/internal/config"
	"github.com/onceflow/onceflow/internal/notes"
	"github.com/onceflow/onceflow/internal/testenv"
	"github.com/onceflow/onceflow/pkg/idempotency"
	"github.com/onceflow/onceflow/pkg/sqsbatch"
	"github.com/onceflow/onceflow/pkg/testkit"
)

// system is one test's tables, queues and functions, wired as the functions' mains wire them.
type system struct {
	db                  *dynamodb.Client
	sqs                 *sqs.Client
	app, idem, stream   string
	notesQ, ledgerQ     string
	notesDLQ, ledgerDLQ string
	notificationsQ      string
	notificationsDLQ    string
	api                 interface {
		Handle(context.Context, events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error)
	}
	tagger, ledger *sqsbatch.Processor
	notifier       *sqsbatch.Processor
	hook           *webhook // the note-notifier's webhook receiver, on loopback
	logs           *bytes.Buffer
}

func newSystem(t *testing.T) *system {
	t.Helper()
	t.Parallel()
	s := &system{db: testkit.DynamoDB(t), sqs: testkit.SQS(t), logs: &bytes.Buffer{}}
	s.app, s.stream = testkit.StreamTable(t, s.db, "app")
	s.idem = testkit.IdempotencyTable(t, s.db)
	s.notesQ, s.ledgerQ = testkit.CreateFIFOQueue(t, s.sqs, "notes"), testkit.CreateFIFOQueue(t, s.sqs, "ledger")
	s.notesDLQ, s.ledgerDLQ = testkit.CreateFIFOQueue(t, s.sqs, "notes-dlq"), testkit.CreateFIFOQueue(t, s.sqs, "ledger-dlq")
	s.notificationsQ, s.notificationsDLQ = testkit.CreateFIFOQueue(t, s.sqs, "notifications"), testkit.CreateFIFOQueue(t, s.sqs, "notifications-dlq")
	s.hook = newWebhook(t)
	params := testenv.Parameters(t, map[string]string{"/test/webhook/url": s.hook.URL, "/test/webhook/secret": s.hook.Secret})
	d := app.Deps{DynamoDB: s.db, SQS: s.sqs, SSM: params, Logger: slog.New(slog.NewJSONHandler(s.logs, nil))}
	var err error
	if s.api, err = app.NewAPI(config.API{AppTable: s.app, IdempotencyTable: s.idem, LedgerConsumer: "ledger"}, d); err != nil {
		t.Fatal(err)
	}
	consumer := func(name, dlq string) config.Consumer {
		return config.Consumer{Name: name, AppTable: s.app, IdempotencyTable: s.idem, DeadLetterQueueURL: dlq, Retention: config.DefaultRetention}
	}
	if s.tagger, err = app.NewNoteTagger(consumer("note-tagger", s.notesDLQ), d); err != nil {
		t.Fatal(err)
	}
	if s.ledger, err = app.NewLedger(consumer("ledger", s.ledgerDLQ), d); err != nil {
		t.Fatal(err)
	}
	notifier := config.Notifier{Name: "note-notifier", IdempotencyTable: s.idem, DeadLetterQueueURL: s.notificationsDLQ,
		Retention: config.DefaultRetention, WebhookURLParameter: "/test/webhook/url", WebhookSecretParameter: "/test/webhook/secret"}
	if s.notifier, err = app.NewNoteNotifier(notifier, d); err != nil {
		t.Fatal(err)
	}
	return s
}

func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return c
}

func handle(t *testing.T, p *sqsbatch.Processor, ev events.SQSEvent) {
	t.Helper()
	resp, err := p.Handle(ctx(t), ev)
	if err != nil || len(resp.BatchItemFailures) != 0 {
		t.Fatalf("batch failures %v, err %v; want none", resp.BatchItemFailures, err)
	}
}

func sqsSample(t *testing.T, name string) events.SQSEvent {
	var ev events.SQSEvent
	apptest.LoadEvent(t, name, &ev)
	return ev
}

// items returns the app table's items whose pk starts with prefix, decoded as generic maps.
func (s *system) items(t *testing.T, table, prefix string) []map[string]any {
	t.Helper()
	out, err := s.db.Scan(context.Background(), &dynamodb.ScanInput{TableName: aws.String(table), ConsistentRead: aws.Bool(true)})
	if err != nil {
		t.Fatal(err)
	}
	var got []map[string]any
	for _, item := range out.Items {
		var m map[string]any
		if err := attributevalue.UnmarshalMap(item, &m); err != nil {
			t.Fatal(err)
		}
		if strings.HasPrefix(m["pk"].(string), prefix) {
			got = append(got, m)
		}
	}
	return got
}

func (s *system) get(t *testing.T, path string) (int, string) {
	t.Helper()
	var req events.APIGatewayV2HTTPRequest
	apptest.LoadEvent(t, "api-get-note.json", &req)
	req.RawPath, req.RequestContext.HTTP.Path = path, path
	resp, err := s.api.Handle(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, resp.Body
}

// seedNotes creates the notes the note-tagger samples refer to.
func (s *system) seedNotes(t *testing.T, ev events.SQSEvent) {
	t.Helper()
	for _, rec := range ev.Records {
		body := rec.Body
		id := rec.Attributes["MessageGroupId"]
		title, content := between(body, `"title":"`, `"`), between(body, `"content":"`, `"`)
		writes, _, err := notes.Create(s.app, id, title, content, time.Now())
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.db.TransactWriteItems(context.Background(), &dynamodb.TransactWriteItemsInput{TransactItems: writes}); err != nil {
			t.Fatal(err)
		}
	}
}

func between(s, start, end string) string {
	_, rest, _ := strings.Cut(s, start)
	v, _, _ := strings.Cut(rest, end)
	return v
}

func TestNoteTagger_tags_the_sample_batch_once_across_redelivery(t *testing.T) {
	s := newSystem(t)
	batchEv := sqsSample(t, "note-tagger-batch.json")
	s.seedNotes(t, batchEv)
	handle(t, s.tagger, batchEv)
	handle(t, s.tagger, sqsSample(t, "note-tagger-redelivered.json"))
	handle(t, s.tagger, batchEv)

	if status, body := s.get(t, "/notes/note-7f3a"); status != http.StatusOK || !strings.Contains(body, `"tags":["lisbon","travel"]`) {
		t.Fatalf("note-7f3a = %d %s; want tags lisbon, travel", status, body)
	}
	want := map[string]string{"travel": `"count":1`, "lisbon": `"count":1`, "weekly": `"count":1`, "food": `"count":1`}
	for tag, count := range want {
		if status, body := s.get(t, "/tags/"+tag); status != http.StatusOK || !strings.Contains(body, count) {
			t.Fatalf("tag %s = %d %s; want %s", tag, status, body, count)
		}
	}
	if got := len(s.items(t, s.app, "TAG#")); got != 8 {
		t.Fatalf("tag items = %d; want 4 counters and 4 memberships", got)
	}
}

func TestNoteTagger_dead_letters_the_malformed_sample(t *testing.T) {
	s := newSystem(t)
	handle(t, s.tagger, sqsSample(t, "note-tagger-malformed.json"))
	if got := testkit.Drain(t, s.sqs, s.notesDLQ); len(got) != 1 {
		t.Fatalf("dead-letter queue holds %d messages; want the malformed one", len(got))
	}
	if got := s.items(t, s.app, ""); len(got) != 0 {
		t.Fatalf("app table holds %v; want nothing", got)
	}
}

func TestLedger_applies_the_sample_batch_once_across_redelivery(t *testing.T) {
	s := newSystem(t)
	handle(t, s.ledger, sqsSample(t, "ledger-batch.json"))
	handle(t, s.ledger, sqsSample(t, "ledger-redelivered.json"))
	handle(t, s.ledger, sqsSample(t, "ledger-batch.json"))
	tests := []struct {
		account string
		want    []string
	}{
		{"acc-1001", []string{`"balance":3800`, `"amount":5000`, `"amount":1200`}},
		{"acc-2002", []string{`"balance":300`}},
	}
	for _, tt := range tests {
		status, body := s.get(t, "/accounts/"+tt.account)
		for _, w := range tt.want {
			if status != http.StatusOK || !strings.Contains(body, w) {
				t.Fatalf("%s = %d %s; want %s", tt.account, status, body, w)
			}
		}
	}
	if got := len(s.items(t, s.app, "ACCOUNT#")); got != 5 {
		t.Fatalf("account items = %d; want 2 accounts and 3 entries", got)
	}
}

func TestLedger_insufficient_funds_is_rejected_and_acknowledged(t *testing.T) {
	s := newSystem(t)
	ev := sqsSample(t, "ledger-insufficient-funds.json")
	handle(t, s.ledger, ev)
	handle(t, s.ledger, ev) // a redelivery gets the same answer
	if got := s.items(t, s.app, "ACCOUNT#"); len(got) != 0 {
		t.Fatalf("app table holds %v; want no balance and no entry", got)
	}
	if got := s.items(t, s.app, "MOVEMENT#"); len(got) != 1 || got[0]["status"] != "rejected" || got[0]["reason"] != "insufficient funds" {
		t.Fatalf("movements = %v; want the debit's, rejected for insufficient funds", got)
	}
	recs := s.items(t, s.idem, "")
	if len(recs) != 1 || recs[0]["outcome"] != string(idempotency.Rejected) || recs[0]["reason"] != "insufficient funds" {
		t.Fatalf("records = %v; want one rejected for insufficient funds", recs)
	}
	if status, _ := s.get(t, "/accounts/acc-3003"); status != http.StatusNotFound {
		t.Fatalf("account acc-3003 = %d; want 404", status)
	}
	if got := testkit.Drain(t, s.sqs, s.ledgerDLQ); len(got) != 0 {
		t.Fatalf("a rejection went to the dead-letter queue: %v", got)
	}
}

func TestLedger_dead_letters_the_malformed_sample(t *testing.T) {
	s := newSystem(t)
	handle(t, s.ledger, sqsSample(t, "ledger-malformed.json"))
	if got := testkit.Drain(t, s.sqs, s.ledgerDLQ); len(got) != 1 {
		t.Fatalf("dead-letter queue holds %d messages; want the malformed one", len(got))
	}
}

// TestApplication_end_to_end runs requests through the API, the relay (routed by
// config.OutboxRoutes) over the real stream, the FIFO queues on fauxqs and the three
// consumers, twice over, and reads the results back.
func TestApplication_end_to_end(t *testing.T) {
	s := newSystem(t)
	requests := []string{"api-create-note.json", "api-credit.json", "api-debit.json", "api-create-note.json", "api-credit.json"}
	var noteID string
	for _, name := range requests {
		var req events.APIGatewayV2HTTPRequest
		apptest.LoadEvent(t, name, &req)
		resp, err := s.api.Handle(context.Background(), req)
		if err != nil || resp.StatusCode >= 300 {
			t.Fatalf("%s = %d %s %v", name, resp.StatusCode, resp.Body, err)
		}
		if strings.Contains(name, "note") {
			noteID = between(resp.Body, `"id":"`, `"`)
		}
	}
	env := map[string]string{"NOTES_QUEUE_URL": s.notesQ, "LEDGER_QUEUE_URL": s.ledgerQ, "NOTIFICATIONS_QUEUE_URL": s.notificationsQ,
		"OUTBOX_PARK_QUEUE_URL": testkit.CreateFIFOQueue(t, s.sqs, "parked")}
	cfg, err := config.LoadRelay(func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	relay, err := app.NewRelay(cfg, app.Deps{SQS: s.sqs, Logger: slog.New(slog.NewJSONHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	recs := testkit.StreamRecords(t, testkit.Streams(t), s.stream)
	for range 2 {
		if resp, err := relay.Handle(context.Background(), events.DynamoDBEvent{Records: recs}); err != nil || len(resp.BatchItemFailures) != 0 {
			t.Fatalf("relay failures %v %v", resp.BatchItemFailures, err)
		}
	}
	for _, c := range []struct {
		q string
		p *sqsbatch.Processor
		n int
	}{{s.notesQ, s.tagger, 1}, {s.ledgerQ, s.ledger, 2}, {s.notificationsQ, s.notifier, 1}} {
		msgs := testkit.Drain(t, s.sqs, c.q)
		if len(msgs) != c.n {
			t.Fatalf("queue received %d messages; want %d", len(msgs), c.n)
		}
		ev := sqsbatch.EventOf(msgs, "arn:aws:sqs:us-east-1:000000000000:q.fifo")
		handle(t, c.p, ev)
		handle(t, c.p, ev)
	}
	if _, body := s.get(t, "/notes/"+noteID); !strings.Contains(body, `"tags":["lisbon","travel"]`) {
		t.Fatalf("note = %s; want tags lisbon, travel", body)
	}
	if _, body := s.get(t, "/accounts/acc-1001"); !strings.Contains(body, `"balance":3800`) {
		t.Fatalf("account = %s; want balance 3800", body)
	}
	if _, body := s.get(t, "/tags/travel"); !strings.Contains(body, `"count":1`) {
		t.Fatalf("tag = %s; want count 1", body)
	}
	if got := s.hook.keys(); !slices.Equal(got, []string{hookKey(noteID)}) {
		t.Fatalf("webhook keys = %v; want the note's one key, once", got)
	}
}
