package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/onceflow/onceflow/pkg/cloudevent"
	"github.com/onceflow/onceflow/pkg/deadletter"
	"github.com/onceflow/onceflow/pkg/idempotency"
	"github.com/onceflow/onceflow/pkg/operator"
	"github.com/onceflow/onceflow/pkg/outbox"
	"github.com/onceflow/onceflow/pkg/port"
)

// cloud is a local cloud's endpoints.json over the emulators, with the template's queues and
// tables (each test its own), as `make up` writes it: its keys are written here as they are in
// the file, not through the tool's own struct.
type cloud struct {
	state string
	db    *dynamodb.Client
	sqs   *sqs.Client
	e     localEndpoints
	fixed atomic.Bool // the stream consumers' poison amounts apply (the cause is fixed)
}

// localEndpoints is what a test keeps of the cloud: queues by logical id, tables by logical id.
type localEndpoints struct {
	Queues map[string]localQueue
	Tables map[string]string
}

type localQueue struct{ URL, ARN string }

func newCloud(t *testing.T) *cloud {
	t.Helper()
	c := &cloud{state: t.TempDir(), db: dynamoDB(t), sqs: sqsClient(t),
		e: localEndpoints{Queues: map[string]localQueue{}, Tables: map[string]string{}}}
	queues, tables := map[string]any{}, map[string]any{}
	for _, id := range []string{"NotesQueue", "LedgerQueue", "NotificationsQueue", "OutboxParkedQueue", "LedgerDeadLetterQueue"} {
		url := fifoQueue(t, c.sqs, strings.ToLower(id))
		c.e.Queues[id] = localQueue{URL: url, ARN: c.arn(t, url)}
		queues[id] = map[string]string{"name": strings.ToLower(id), "url": url, "arn": c.e.Queues[id].ARN}
	}
	c.e.Tables["AppTable"] = createTable(t, c.db, "app", "pk", "sk")
	c.e.Tables["IdempotencyTable"] = createTable(t, c.db, "idem", "pk")
	for id, name := range c.e.Tables {
		tables[id] = map[string]string{"name": name}
	}
	q := func(id string) string { return c.e.Queues[id].URL }
	b, _ := json.Marshal(map[string]any{"dynamodb": os.Getenv("DYNAMODB_ENDPOINT"), "sqs": os.Getenv("SQS_ENDPOINT"), "region": "us-east-1",
		"queues": queues, "tables": tables, "outputs": map[string]string{
			"OutboxRoutes": "note.created=" + q("NotesQueue") + ",note.created=" + q("NotificationsQueue") +
				",account.credited=" + q("LedgerQueue") + ",account.debited=" + q("LedgerQueue"),
			"ConsumerNames": "note-tagger,ledger,note-notifier"}})
	if err := os.WriteFile(filepath.Join(c.state, "endpoints.json"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	return c
}

// output sets the stack output key of the cloud's endpoints.json to value.
func (c *cloud) output(t *testing.T, key, value string) {
	c.edit(t, func(doc map[string]any) { doc["outputs"].(map[string]any)[key] = value })
}

// edit rewrites the cloud's endpoints.json as change changes it.
func (c *cloud) edit(t *testing.T, change func(doc map[string]any)) {
	t.Helper()
	path := filepath.Join(c.state, "endpoints.json")
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	change(doc)
	if b, err = json.Marshal(doc); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

func (c *cloud) arn(t *testing.T, url string) string {
	out, err := c.sqs.GetQueueAttributes(t.Context(), &sqs.GetQueueAttributesInput{QueueUrl: aws.String(url),
		AttributeNames: []sqstypes.QueueAttributeName{sqstypes.QueueAttributeNameQueueArn}})
	if err != nil {
		t.Fatal(err)
	}
	return out.Attributes["QueueArn"]
}

// onceflow runs the command with --local on this cloud, stdin as its input, and returns its
// exit status and output.
func (c *cloud) onceflow(t *testing.T, stdin string, args ...string) (int, string) {
	t.Helper()
	var out, errOut bytes.Buffer
	args = append(args, "--local", "--state", c.state)
	code := run(t.Context(), args, strings.NewReader(stdin), &out, &errOut)
	t.Logf("onceflow %s -> %d\n%s%s", strings.Join(args[:2], " "), code, out.String(), errOut.String())
	return code, out.String() + errOut.String()
}

// received drains a queue and returns "group/dedup" of each message.
func (c *cloud) received(t *testing.T, id string) []string {
	var got []string
	for _, m := range drain(t, c.sqs, c.e.Queues[id].URL) {
		var ev struct{ ID string }
		_ = json.Unmarshal([]byte(aws.ToString(m.Body)), &ev)
		got = append(got, m.Attributes["MessageGroupId"]+"/"+ev.ID)
	}
	return got
}

func event(t *testing.T, id, typ, subject string) cloudevent.Event {
	ev, err := cloudevent.New(id, "test", typ, subject, time.Now(), map[string]int{"amount": 5})
	if err != nil {
		t.Fatal(err)
	}
	return ev
}

func TestDLQ_lists_shows_and_redrives_dead_letters_to_their_source_queue(t *testing.T) {
	t.Parallel()
	c := newCloud(t)
	dlq := deadletter.New(c.sqs, c.e.Queues["LedgerDeadLetterQueue"].URL)
	for _, l := range []struct{ id, typ, group, reason string }{
		{"credit-1", "account.credited", "acct-1", "failed 5 times: throttled"},
		{"bad-1", "account.frozen", "acct-2", `malformed message: type: "account.frozen" is not handled`},
	} {
		body, _ := cloudevent.Encode(event(t, l.id, l.typ, l.group))
		msg := events.SQSMessage{MessageId: "m-" + l.id, Body: string(body), EventSourceARN: c.e.Queues["LedgerQueue"].ARN,
			Attributes: map[string]string{"MessageGroupId": l.group, "MessageDeduplicationId": l.id, "ApproximateReceiveCount": "5"}}
		if err := dlq.DeadLetter(t.Context(), msg, errors.New(l.reason)); err != nil {
			t.Fatal(err)
		}
	}
	code, out := c.onceflow(t, "", "dlq", "list", "--queue", "LedgerDeadLetterQueue")
	if code != 0 || !strings.Contains(out, "failed 5 times: throttled") || !strings.Contains(out, "event bad-1") || !strings.Contains(out, "2 shown") {
		t.Errorf("dlq list: %d; want both letters with their reasons", code)
	}
	// A letter's line keeps its fields in their order, the id it was first sent as last:
	// scripts read it (infra/workload's drill reads it with this pattern).
	if line := regexp.MustCompile(`(?m)^(\S+)  event (\S+)  type \S+  group (\S+)  at [^\n]*  sent as \S+\n    reason: ([^\n]*)`); len(line.FindAllString(out, -1)) != 2 {
		t.Errorf("dlq list printed %q; want each letter's line as message id, event, type, group, at, sent as, then its reason", out)
	}
	if code, out := c.onceflow(t, "", "dlq", "list", "--queue", "LedgerDeadLetterQueue", "--reason", "MALFORMED"); code != 0 || strings.Contains(out, "credit-1") || !strings.Contains(out, "1 shown") {
		t.Errorf("dlq list --reason: %d; want the malformed letter only", code)
	}
	if code, out := c.onceflow(t, "", "dlq", "list", "--queue", "LedgerDeadLetterQueue", "--limit", "1"); code != 0 || strings.Contains(out, "bad-1") || !strings.Contains(out, "1 shown") {
		t.Errorf("dlq list --limit 1: %d; want the first letter only", code)
	}
	code, out = c.onceflow(t, "", "dlq", "show", "credit-1", "--queue", "LedgerDeadLetterQueue")
	if code != 0 || !strings.Contains(out, `"id":"credit-1"`) || !strings.Contains(out, c.e.Queues["LedgerQueue"].ARN) {
		t.Errorf("dlq show: %d; want the letter's body and source queue", code)
	}
	code, out = c.onceflow(t, "", "dlq", "redrive", "--queue", "LedgerDeadLetterQueue", "--type", "account.credited")
	if code != 0 || !strings.Contains(out, "moved 1,") {
		t.Errorf("dlq redrive: %d; want one moved", code)
	}
	if got := c.received(t, "LedgerQueue"); len(got) != 1 || got[0] != "acct-1/credit-1" {
		t.Errorf("ledger queue received %v; want acct-1/credit-1 (group and event kept)", got)
	}
	if code, out := c.onceflow(t, "", "dlq", "list", "--queue", "LedgerDeadLetterQueue"); code != 0 || !strings.Contains(out, "1 shown") || !strings.Contains(out, "bad-1") {
		t.Errorf("after redrive: %d; want the malformed letter still there", code)
	}
}

func TestRecord_get_and_delete_a_consumers_record_and_release_a_hold(t *testing.T) {
	c := newCloud(t)
	table := c.e.Tables["IdempotencyTable"]
	rec := operator.Record{Key: operator.Key("ledger", "credit-9"), Consumer: "ledger", EventID: "credit-9",
		EventType: "account.credited", Outcome: "applied", MessageID: "m-9", Group: "acct-9",
		ProcessedAt: time.Now().UTC().Format(time.RFC3339), ExpiresAt: time.Now().Add(time.Hour).Unix()}
	item, _ := attributevalue.MarshalMap(rec)
	if _, err := c.db.PutItem(t.Context(), &dynamodb.PutItemInput{TableName: aws.String(table), Item: item}); err != nil {
		t.Fatal(err)
	}
	consumer, err := idempotency.New(c.db, idempotency.NewRouter(), idempotency.Config{Name: "ledger", Table: table, AfterDeadLetter: idempotency.HoldGroup})
	if err != nil {
		t.Fatal(err)
	}
	if err := holdAhead(t.Context(), consumer, "acct-9", port.Held{EventID: "debit-8", MessageID: "m-8"}, errors.New("failed 5 times")); err != nil {
		t.Fatal(err)
	}
	code, out := c.onceflow(t, "", "record", "get", "--consumer", "ledger", "credit-9")
	if code != 0 || !strings.Contains(out, `"outcome": "applied"`) || !strings.Contains(out, "HELD") || !strings.Contains(out, "debit-8") {
		t.Errorf("record get: %d; want the applied record and its group's hold", code)
	}
	if code, out := c.onceflow(t, "n\n", "record", "delete", "--consumer", "ledger", "credit-9"); code != 1 || !strings.Contains(out, "applies its effect AGAIN") {
		t.Errorf("record delete answered no: %d; want a refusal after saying what a redelivery does", code)
	}
	if code, out := c.onceflow(t, "", "record", "get", "--consumer", "ledger", "credit-9"); code != 0 || !strings.Contains(out, "applied") {
		t.Error("the record is gone though the operator said no")
	}
	if code, _ := c.onceflow(t, "yes\n", "record", "delete", "--consumer", "ledger", "credit-9"); code != 0 {
		t.Errorf("record delete answered yes: %d", code)
	}
	if code, out := c.onceflow(t, "", "record", "get", "--consumer", "ledger", "credit-9"); code != 0 || !strings.Contains(out, "none") {
		t.Error("the record is still there after delete")
	}
	if code, _ := c.onceflow(t, "", "hold", "release", "--consumer", "ledger", "--yes", "acct-9"); code != 0 {
		t.Errorf("hold release: %d", code)
	}
	if code, out := c.onceflow(t, "", "hold", "get", "--consumer", "ledger", "acct-9"); code != 0 || !strings.Contains(out, "not held") {
		t.Error("the group is still held after release")
	}
}

func TestOutbox_republish_sends_events_where_the_relay_routes_them(t *testing.T) {
	t.Parallel()
	c := newCloud(t)
	app := c.e.Tables["AppTable"]
	start := time.Now()
	for _, ev := range []cloudevent.Event{event(t, "note-ev-1", "note.created", "note-1"), event(t, "credit-ev-1", "account.credited", "acct-1")} {
		w, err := outbox.Put(app, ev, time.Now())
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.db.TransactWriteItems(t.Context(), &dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{w}}); err != nil {
			t.Fatal(err)
		}
	}
	if code, _ := c.onceflow(t, "", "outbox", "republish", "--event-id", "credit-ev-1"); code != 0 {
		t.Errorf("republish --event-id: %d", code)
	}
	if got := c.received(t, "LedgerQueue"); fmt.Sprint(got) != "[acct-1/credit-ev-1]" {
		t.Errorf("ledger queue got %v; want the credit with its event id", got)
	}
	if code, _ := c.onceflow(t, "", "outbox", "republish", "--since", start.Add(-time.Second).Format(time.RFC3339Nano)); code != 0 {
		t.Errorf("republish --since: %d", code)
	}
	// note.created goes to both of its queues, as the stack's OutboxRoutes output routes it.
	for _, q := range []string{"NotesQueue", "NotificationsQueue"} {
		if got := c.received(t, q); fmt.Sprint(got) != "[note-1/note-ev-1]" {
			t.Errorf("%s got %v; want note-1/note-ev-1", q, got)
		}
	}
}

func TestOnceflow_usage(t *testing.T) {
	c := newCloud(t)
	tests := []struct {
		name string
		args []string
		code int
	}{
		{"help", []string{"--help"}, 0},
		{"a subcommand's help", []string{"dlq", "redrive", "--help"}, 0},
		{"a command's help", []string{"dlq", "--help"}, 0},
		{"flags before the command", []string{"--local", "dlq", "list"}, 2},
		{"unknown command", []string{"dlq", "purge"}, 2},
		{"a missing queue", []string{"dlq", "list", "--local", "--state", c.state}, 2},
		{"republish without a selection", []string{"outbox", "republish", "--local", "--state", c.state}, 2},
		{"no local cloud", []string{"dlq", "list", "--local", "--state", t.TempDir(), "--queue", "X"}, 1},
		{"--local and --stack", []string{"dlq", "list", "--local", "--state", c.state, "--stack", "prod", "--queue", "X"}, 2},
		{"no stack and no --table", []string{"record", "get", "--consumer", "ledger", "e-1"}, 2},
		{"no stack and no --route", []string{"outbox", "republish", "--table", "app", "--event-id", "e-1"}, 2},
		{"--local and --endpoint-url", []string{"dlq", "list", "--local", "--state", c.state, "--endpoint-url", "http://127.0.0.1:1", "--queue", "X"}, 2},
		{"--env-credentials without --local", []string{"dlq", "list", "--env-credentials", "--queue", "X"}, 2},
	}
	// Credentials from the environment, as on AWS: without any, every command without --local
	// stops before its usage is checked (TestOnceflow_without_credentials_says_so_in_one_line_and_calls_nothing).
	t.Setenv("AWS_ACCESS_KEY_ID", "operator")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "operator-secret")
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out bytes.Buffer
			if code := run(context.Background(), tt.args, strings.NewReader(""), &out, &out); code != tt.code {
				t.Errorf("exit %d; want %d\n%s", code, tt.code, out.String())
			}
		})
	}
}
