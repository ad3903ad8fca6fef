package onceflow_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	ddbtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/onceflow/onceflow/infra/iam"
	"github.com/onceflow/onceflow/pkg/cloudevent"
	"github.com/onceflow/onceflow/pkg/deadletter"
	"github.com/onceflow/onceflow/pkg/idempotency"
	"github.com/onceflow/onceflow/pkg/outbox"
	"github.com/onceflow/onceflow/pkg/port"
	"github.com/onceflow/onceflow/pkg/testkit"
	"github.com/onceflow/onceflow/pkg/testkit/fault"
)

// operatorStack is the stack's queues and tables in the emulators, by logical id, that the
// built tool reaches with --local through two proxies that record every call as IAM would
// authorise it (fault.DenyProxy, denying nothing).
type operatorStack struct {
	sqs    *sqs.Client
	db     *dynamodb.Client
	names  map[string]string // logical id → queue or table name
	urls   map[string]string // queue logical id → URL
	state  string
	ddb    *fault.DenyProxy
	sqsRec *fault.DenyProxy
}

func newOperatorStack(t *testing.T) *operatorStack {
	t.Helper()
	s := &operatorStack{sqs: testkit.SQS(t), db: testkit.DynamoDB(t), names: map[string]string{}, urls: map[string]string{}, state: t.TempDir()}
	s.ddb, s.sqsRec = fault.NewDenyProxy(t, os.Getenv("DYNAMODB_ENDPOINT")), fault.NewDenyProxy(t, os.Getenv("SQS_ENDPOINT"))
	queues := map[string]any{}
	for _, id := range []string{"NotesQueue", "LedgerQueue", "NotificationsQueue", "NotesDeadLetterQueue", "LedgerDeadLetterQueue",
		"NotificationsDeadLetterQueue", "OutboxParkedQueue"} {
		s.urls[id] = testkit.CreateFIFOQueue(t, s.sqs, strings.ToLower(id))
		s.names[id] = s.urls[id][strings.LastIndex(s.urls[id], "/")+1:]
		queues[id] = map[string]string{"url": s.urls[id]}
	}
	s.names["AppTable"], _ = testkit.StreamTable(t, s.db, "app")
	s.names["IdempotencyTable"] = testkit.IdempotencyTable(t, s.db)
	q := func(id string) string { return s.urls[id] }
	b, _ := json.Marshal(map[string]any{"dynamodb": s.ddb.URL, "sqs": s.sqsRec.URL, "region": "us-east-1", "queues": queues,
		"tables": map[string]any{"AppTable": map[string]string{"name": s.names["AppTable"]}, "IdempotencyTable": map[string]string{"name": s.names["IdempotencyTable"]}},
		"outputs": map[string]string{"ConsumerNames": "note-tagger,ledger,note-notifier",
			"OutboxRoutes": "note.created=" + q("NotesQueue") + ",note.created=" + q("NotificationsQueue") + ",account.credited=" + q("LedgerQueue")}})
	if err := os.WriteFile(filepath.Join(s.state, "endpoints.json"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	return s
}

// arn is the ARN the proxies give the resource of logical id id.
func (s *operatorStack) arn(id string) string {
	if strings.HasSuffix(id, "Table") {
		return "arn:aws:dynamodb:us-east-1:000000000000:table/" + s.names[id]
	}
	return "arn:aws:sqs:us-east-1:000000000000:" + s.names[id]
}

// seed puts what the runbook's commands act on in place: the ledger's letters (one malformed,
// one failed 5 times, one the queue moved) with their groups held, a record with its failed
// attempts, two more held groups, an outbox event and a parked item.
func (s *operatorStack) seed(t *testing.T) {
	t.Helper()
	ctx := t.Context()
	c, err := idempotency.New(s.db, idempotency.HandlerFunc(func(_ context.Context, ev cloudevent.Event) (idempotency.Effect, error) {
		if ev.ID == "credit-4" {
			return nil, errors.New("throttled") // its failed attempt is counted, below
		}
		// a credit's line: an event of no effect would leave no record for the commands to show
		return idempotency.Effect{idempotency.Put(s.names["AppTable"], map[string]string{"pk": "LEDGER#" + ev.Subject, "sk": "CREDIT#" + ev.ID})}, nil
	}), idempotency.Config{Name: "ledger", Table: s.names["IdempotencyTable"], AfterDeadLetter: idempotency.HoldGroup,
		Logger: slog.New(slog.NewJSONHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	dlq := deadletter.New(s.sqs, s.urls["LedgerDeadLetterQueue"])
	for _, l := range []struct{ id, group, reason string }{{"credit-1", "acct-1", "malformed message: data.amount: must be positive"},
		{"credit-2", "acct-2", "failed 5 times: throttled"}} {
		ev := operatorEvent(t, l.id, l.group)
		body, _ := cloudevent.Encode(ev)
		msg := events.SQSMessage{MessageId: "m-" + l.id, Body: string(body), EventSourceARN: s.arn("LedgerQueue"),
			Attributes: map[string]string{"MessageGroupId": l.group, "MessageDeduplicationId": l.id}}
		if _, err := c.Engine().HoldAhead(ctx, l.group, []port.Held{{EventID: l.id, MessageID: msg.MessageId, PayloadHash: ev.PayloadHash(), Reason: l.reason}}); err != nil {
			t.Fatal(err)
		}
		if err := dlq.DeadLetter(ctx, msg, deadletter.WithEventID(errors.New(l.reason), l.id)); err != nil {
			t.Fatal(err)
		}
	}
	body, _ := cloudevent.Encode(operatorEvent(t, "credit-3", "acct-3"))
	for _, m := range []struct{ queue, group, dedup, body string }{
		{"LedgerDeadLetterQueue", "acct-3", "moved-3", string(body)}, // as SQS moves a message: no engine attributes
		{"OutboxParkedQueue", outbox.ParkGroup, "parked-1", `{"reason":"body: too large","eventId":"note-created-9"}`},
	} {
		if _, err := s.sqs.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: aws.String(s.urls[m.queue]), MessageBody: aws.String(m.body),
			MessageGroupId: aws.String(m.group), MessageDeduplicationId: aws.String(m.dedup)}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := c.Apply(ctx, operatorEvent(t, "credit-9", "acct-9"), port.Delivery{MessageID: "m-9", Group: "acct-9"}); err != nil {
		t.Fatal(err)
	}
	b := c.Engine().Begin(1, port.Rules{})
	err = b.Apply(ctx, operatorEvent(t, "credit-4", "acct-4"), port.Delivery{MessageID: "m-4", Group: "acct-4"})
	b.Leave(ctx)
	if err == nil || idempotency.IsPermanent(err) {
		t.Fatalf("credit-4 = %v; want its first failed attempt counted", err)
	}
	for _, g := range []string{"acct-4", "acct-5"} {
		if _, err := c.Engine().HoldAhead(ctx, g, []port.Held{{EventID: "credit-" + g, MessageID: "m-" + g, Reason: "failed 5 times: throttled"}}); err != nil {
			t.Fatal(err)
		}
	}
	w, err := outbox.Put(s.names["AppTable"], operatorEvent(t, "credit-7", "acct-7"), time.Now().Add(-time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.db.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: []ddbtypes.TransactWriteItem{w}}); err != nil {
		t.Fatal(err)
	}
}

func operatorEvent(t *testing.T, id, account string) cloudevent.Event {
	t.Helper()
	ev, err := cloudevent.New(id, "test", "account.credited", account, time.Now(), map[string]any{"amount": 5})
	if err != nil {
		t.Fatal(err)
	}
	return ev
}

// allowedBy reports whether the OperatorPolicy's statements allow call, resolving each
// statement's resources (logical ids) to the ARNs the proxies give them, and its
// dynamodb:LeadingKeys patterns as IAM's ForAllValues:StringLike does (the one leading key a
// call names); it returns the Sid that allows it.
func (s *operatorStack) allowedBy(sts map[string]opStatement, c fault.Call) (string, bool) {
	for sid, st := range sts {
		if !slices.ContainsFunc(st.actions, func(a string) bool { return strings.EqualFold(a, c.Action) }) {
			continue
		}
		if !slices.ContainsFunc(st.resources, func(id string) bool { return s.arn(id) == c.Resource }) {
			continue
		}
		if st.keys == nil || slices.ContainsFunc(st.keys, func(p string) bool { return iam.Like(p, c.Key) }) {
			return sid, true
		}
	}
	return "", false
}

// Every command of the runbook, run as the built tool on the stack's resources with the
// operator's credentials, makes only calls the OperatorPolicy allows, and the policy grants
// no action none of them makes (but DescribeStacks, which --stack makes on AWS only). The calls
// each command made are logged, as IAM authorises them.
func TestOperatorPolicy_allows_every_call_of_the_runbook_commands_and_no_other(t *testing.T) {
	s := newOperatorStack(t)
	s.seed(t)
	bin := filepath.Join(t.TempDir(), "onceflow")
	if out, err := exec.Command(goTool(t), "build", "-o", bin, "./cmd/onceflow").CombinedOutput(); err != nil {
		t.Fatalf("build onceflow: %v\n%s", err, out)
	}
	commands := [][]string{
		{"dlq", "list", "--queue", "LedgerDeadLetterQueue"},
		{"dlq", "show", "--queue", s.names["LedgerDeadLetterQueue"], "credit-2"}, // by name: GetQueueUrl
		{"hold", "get", "--consumer", "ledger", "acct-1"},
		{"record", "get", "--consumer", "ledger", "credit-9"},
		{"record", "get", "--consumer", "ledger", "credit-4"},
		{"dlq", "discard", "--queue", "LedgerDeadLetterQueue", "--consumer", "ledger", "--why", "producer bug", "--yes", "credit-1"},
		{"hold", "skip", "--consumer", "ledger", "--why", "refund by hand", "--yes", "--queue", "LedgerDeadLetterQueue", "acct-2"},
		{"dlq", "redrive", "--queue", "LedgerDeadLetterQueue", "--to", "LedgerQueue", "--reason", "moved by", "--dry-run"},
		{"dlq", "redrive", "--queue", "LedgerDeadLetterQueue", "--to", "LedgerQueue", "--reason", "moved by"},
		{"dlq", "redrive", "--queue", "LedgerDeadLetterQueue", "--dry-run"},
		{"dlq", "redrive", "--queue", "LedgerDeadLetterQueue"},
		{"hold", "skip", "--consumer", "ledger", "--why", "refund by hand", "--yes", "acct-4"},
		{"hold", "release", "--consumer", "ledger", "--yes", "acct-5"},
		{"record", "delete", "--consumer", "ledger", "--yes", "credit-9"},
		{"outbox", "republish", "--since", "1h", "--dry-run"},
		{"outbox", "republish", "--event-id", "credit-7"},
		{"dlq", "list", "--queue", s.names["OutboxParkedQueue"]},
	}
	sts := operatorStatements(loadTemplate(t))
	used := map[string]bool{} // "<sid> <action>"
	var report strings.Builder
	for _, args := range commands {
		db, q := len(s.ddb.Calls()), len(s.sqsRec.Calls())
		var out bytes.Buffer
		cmd := exec.CommandContext(t.Context(), bin, append(args, "--local", "--state", s.state, "--env-credentials")...)
		// The operator's credentials from the environment (DynamoDB Local keeps a database per
		// access key id, so the local one; the session token tells them apart).
		cmd.Env = []string{"HOME=" + t.TempDir(), "AWS_ACCESS_KEY_ID=local", "AWS_SECRET_ACCESS_KEY=operator-secret", "AWS_SESSION_TOKEN=operator-session"}
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Run(); err != nil {
			t.Fatalf("onceflow %s: %v\n%s", strings.Join(args, " "), err, out.String())
		}
		calls := append(s.ddb.Calls()[db:], s.sqsRec.Calls()[q:]...)
		if len(calls) == 0 {
			t.Errorf("onceflow %s made no call", strings.Join(args, " "))
		}
		seen := map[string]bool{}
		for _, c := range calls {
			if c.Session != "operator-session" {
				t.Errorf("onceflow %s signed %s with session %q; want the environment's credentials", strings.Join(args, " "), c.Action, c.Session)
			}
			sid, ok := s.allowedBy(sts, c)
			if !ok {
				t.Errorf("onceflow %s: %s on %s (key %q) is not allowed by the OperatorPolicy", strings.Join(args, " "), c.Action, c.Resource, c.Key)
				continue
			}
			used[sid+" "+strings.ToLower(c.Action)] = true
			line := fmt.Sprintf("%s on %s", c.Action, s.logicalID(c.Resource))
			if c.Key != "" && strings.HasPrefix(c.Action, "dynamodb:") {
				line += fmt.Sprintf(" (key %s)", c.Key)
			}
			seen[line] = true
		}
		fmt.Fprintf(&report, "onceflow %s\n    %s\n", strings.Join(args, " "), strings.Join(slices.Sorted(maps.Keys(seen)), "\n    "))
	}
	t.Logf("calls of each command, as IAM authorises them:\n%s", report.String())
	for sid, st := range sts {
		for _, a := range st.actions {
			// DescribeStacks is made on AWS only; S3's reads of claim checks go to the bucket,
			// which these proxies do not record: the gatekeeper's run of the runbook commands
			// (cmd/onceflow/cloudtest) authorises those.
			if !used[sid+" "+strings.ToLower(a)] && a != "cloudformation:DescribeStacks" && !strings.HasPrefix(a, "s3:") {
				t.Errorf("the OperatorPolicy grants %s (%s), which no command of the runbook made", a, sid)
			}
		}
	}
}

// logicalID names the resource of arn by its logical id.
func (s *operatorStack) logicalID(arn string) string {
	for id := range s.names {
		if s.arn(id) == arn {
			return id
		}
	}
	return arn
}
