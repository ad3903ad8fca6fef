package onceflow_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/onceflow/onceflow/infra/localcloud"
	"github.com/onceflow/onceflow/infra/sam/samtest"
	"github.com/onceflow/onceflow/infra/workload/workloadtest"
	"github.com/onceflow/onceflow/internal/ledger"
	"github.com/onceflow/onceflow/pkg/cloudevent"
	"github.com/onceflow/onceflow/pkg/operator"
	"github.com/onceflow/onceflow/pkg/testkit"
)

// awsCLI runs the AWS CLI, a client nobody here wrote, against one endpoint of the local
// cloud with its static identity, and decodes the JSON it prints into out (when not nil).
type awsCLI struct {
	path string
	env  []string
}

func newAWSCLI(t *testing.T) awsCLI {
	t.Helper()
	p, err := samtest.Tool("aws")
	if err != nil {
		t.Fatal(err)
	}
	home := t.TempDir() // no profile of the machine's user is read
	return awsCLI{path: p, env: append(os.Environ(), "AWS_ACCESS_KEY_ID="+localcloud.AccessKeyID,
		"AWS_SECRET_ACCESS_KEY="+localcloud.SecretAccessKey, "AWS_DEFAULT_REGION="+localcloud.Region, "AWS_PAGER=",
		"AWS_CONFIG_FILE="+filepath.Join(home, "config"), "AWS_SHARED_CREDENTIALS_FILE="+filepath.Join(home, "credentials"),
		"AWS_EC2_METADATA_DISABLED=true")}
}

// cliCallBound bounds one call of the AWS CLI: a call that takes longer hangs (a call takes 1 to
// 10 s of a loaded machine's time, most of it Python's start).
const cliCallBound = 2 * time.Minute

func (c awsCLI) run(ctx context.Context, t *testing.T, endpoint string, out any, args ...string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, cliCallBound)
	defer cancel()
	cmd := exec.CommandContext(ctx, c.path, append([]string{"--endpoint-url", endpoint, "--output", "json"}, args...)...)
	cmd.Env = c.env
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stdout, err := cmd.Output()
	if err != nil {
		t.Fatalf("aws %v: %v\n%s", args, err, stderr.String())
	}
	if out != nil && len(bytes.TrimSpace(stdout)) > 0 {
		if err := json.Unmarshal(stdout, out); err != nil {
			t.Fatalf("aws %v printed %s: %v", args, stdout, err)
		}
	}
}

type cliMessage struct {
	MessageId, ReceiptHandle, Body string
	Attributes                     map[string]string
	MessageAttributes              map[string]struct{ StringValue string }
}

type cliReceive struct{ Messages []cliMessage }

// driveWithAWSCLI sends, receives and deletes on the queues nothing consumes, redrives a dead
// letter as the runbook's AWS CLI steps do and reads what the consumer made of it from the
// tables, and invokes a function through the local Lambda API.
func driveWithAWSCLI(ctx context.Context, t *testing.T, cloud workloadtest.Cloud) {
	cli, e := newAWSCLI(t), cloud.Endpoints()
	t.Run("queues: send, receive, delete", func(t *testing.T) {
		for _, id := range []string{"OutboxParkedQueue", "OutboxRelayFailureQueue"} {
			url := e.Queues[id].URL
			body := fmt.Sprintf(`{"probe":"%s-%d"}`, id, time.Now().UnixNano())
			args := []string{"sqs", "send-message", "--queue-url", url, "--message-body", body}
			if id == "OutboxParkedQueue" { // FIFO
				args = append(args, "--message-group-id", "cli", "--message-deduplication-id", fmt.Sprint(time.Now().UnixNano()))
			}
			var sent struct{ MessageId string }
			cli.run(ctx, t, e.SQS, &sent, args...)
			var got cliReceive
			cli.run(ctx, t, e.SQS, &got, "sqs", "receive-message", "--queue-url", url, "--wait-time-seconds", "2",
				"--attribute-names", "All")
			if len(got.Messages) != 1 || got.Messages[0].Body != body || got.Messages[0].MessageId != sent.MessageId {
				t.Fatalf("%s: received %+v; want the message %s just sent", id, got.Messages, sent.MessageId)
			}
			cli.run(ctx, t, e.SQS, nil, "sqs", "delete-message", "--queue-url", url, "--receipt-handle", got.Messages[0].ReceiptHandle)
			if n := queueDepth(ctx, t, cli, e, id); n != 0 {
				t.Errorf("%s holds %d messages after the delete; want 0", id, n)
			}
		}
	})
	t.Run("queues and tables: listed and described", func(t *testing.T) {
		var queues struct{ QueueUrls []string }
		cli.run(ctx, t, e.SQS, &queues, "sqs", "list-queues")
		var tables struct{ TableNames []string }
		cli.run(ctx, t, e.DynamoDB, &tables, "dynamodb", "list-tables")
		for id, q := range e.Queues {
			if !slices.Contains(queues.QueueUrls, q.URL) {
				t.Errorf("aws sqs list-queues does not list %s (%s)", id, q.URL)
			}
		}
		for id, tb := range e.Tables {
			var d struct {
				Table struct{ TableName, TableStatus string }
			}
			cli.run(ctx, t, e.DynamoDB, &d, "dynamodb", "describe-table", "--table-name", tb.Name)
			if !slices.Contains(tables.TableNames, tb.Name) || d.Table.TableName != tb.Name || d.Table.TableStatus != "ACTIVE" {
				t.Errorf("%s: listed %v, described %+v; want %s listed and ACTIVE", id, slices.Contains(tables.TableNames, tb.Name), d.Table, tb.Name)
			}
		}
	})
	t.Run("the operator's redrive: dead-letter queue to source queue, applied, read from the tables", func(t *testing.T) {
		account := fmt.Sprintf("cli-%d", time.Now().UnixNano())
		ev, err := ledger.NewEvent(ledger.Credited, account, "ref-1", 250, time.Now())
		if err != nil {
			t.Fatal(err)
		}
		body, err := cloudevent.Encode(ev)
		if err != nil {
			t.Fatal(err)
		}
		dlq, source := e.Queues["LedgerDeadLetterQueue"].URL, e.Queues["LedgerQueue"].URL
		// a letter as the consumer leaves it: its group, its event id, the reason
		cli.run(ctx, t, e.SQS, nil, "sqs", "send-message", "--queue-url", dlq, "--message-body", string(body),
			"--message-group-id", account, "--message-deduplication-id", ev.ID,
			"--message-attributes", `{"reason":{"DataType":"String","StringValue":"failed 5 times: the test put it here"}}`)
		// the runbook: receive the letters with their reasons, fix the cause, send them back, delete them
		var got cliReceive
		cli.run(ctx, t, e.SQS, &got, "sqs", "receive-message", "--queue-url", dlq, "--max-number-of-messages", "10",
			"--visibility-timeout", "60", "--message-attribute-names", "All", "--attribute-names", "All", "--wait-time-seconds", "2")
		if len(got.Messages) != 1 || got.Messages[0].Body != string(body) || got.Messages[0].MessageAttributes["reason"].StringValue == "" {
			t.Fatalf("received %+v from the dead-letter queue; want the letter with its reason", got.Messages)
		}
		letter := got.Messages[0]
		cli.run(ctx, t, e.SQS, nil, "sqs", "send-message", "--queue-url", source, "--message-body", letter.Body,
			"--message-group-id", letter.Attributes["MessageGroupId"], "--message-deduplication-id", ev.ID+"-redrive-1")
		cli.run(ctx, t, e.SQS, nil, "sqs", "delete-message", "--queue-url", dlq, "--receipt-handle", letter.ReceiptHandle)

		recordKey := fmt.Sprintf(`{"pk":{"S":%q}}`, operator.Key(cloud.Functions()["LedgerFunction"].Env["CONSUMER_NAME"], ev.ID))
		var record struct{ Item map[string]any }
		testkit.Eventually(t, 30*time.Second, func() error {
			cli.run(ctx, t, e.DynamoDB, &record, "dynamodb", "get-item", "--table-name", e.Tables["IdempotencyTable"].Name,
				"--key", recordKey, "--consistent-read")
			if record.Item == nil {
				return fmt.Errorf("the ledger has no record of the redriven event %s", ev.ID)
			}
			return nil
		})
		var accounts struct {
			Count int
			Items []struct{ Balance struct{ N string } }
		}
		cli.run(ctx, t, e.DynamoDB, &accounts, "dynamodb", "query", "--table-name", e.Tables["AppTable"].Name,
			"--key-condition-expression", "pk = :pk", "--expression-attribute-values",
			fmt.Sprintf(`{":pk":{"S":%q}}`, ledger.PK(account)), "--consistent-read")
		var balance string
		for _, it := range accounts.Items {
			if it.Balance.N != "" {
				balance = it.Balance.N
			}
		}
		if balance != "250" {
			t.Errorf("account %s: query found %d items, balance %q; want the credit of 250 applied once", account, accounts.Count, balance)
		}
		if n := queueDepth(ctx, t, cli, e, "LedgerDeadLetterQueue"); n != 0 {
			t.Errorf("the dead-letter queue holds %d messages after the redrive; want 0", n)
		}
	})
	t.Run("lambda: invoke a function through the local Lambda API", func(t *testing.T) {
		out := filepath.Join(t.TempDir(), "out.json")
		var status struct {
			StatusCode    int
			FunctionError string
		}
		cli.run(ctx, t, e.LambdaURL, &status, "lambda", "invoke", "--function-name", "NoteTaggerFunction",
			"--payload", "fileb://events/note-tagger-batch.json", out)
		raw, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		var resp struct{ BatchItemFailures []any }
		if status.StatusCode != 200 || status.FunctionError != "" || json.Unmarshal(raw, &resp) != nil || resp.BatchItemFailures == nil || len(resp.BatchItemFailures) != 0 {
			t.Errorf("aws lambda invoke: %+v, response %s; want 200 and no batch item failures", status, raw)
		}
	})
}

// queueDepth is a queue's visible and in-flight messages, as get-queue-attributes reports.
func queueDepth(ctx context.Context, t *testing.T, cli awsCLI, e localcloud.Endpoints, id string) int {
	t.Helper()
	var attrs struct{ Attributes map[string]string }
	cli.run(ctx, t, e.SQS, &attrs, "sqs", "get-queue-attributes", "--queue-url", e.Queues[id].URL, "--attribute-names",
		"ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible")
	return num(attrs.Attributes["ApproximateNumberOfMessages"]) + num(attrs.Attributes["ApproximateNumberOfMessagesNotVisible"])
}
