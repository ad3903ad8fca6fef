package cloudtest_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/onceflow/onceflow/infra/workload/workloadtest"
	"github.com/onceflow/onceflow/pkg/outbox"
)

// The built tool on the whole local cloud of template.yaml, through the endpoints.json it
// wrote: dead letters the real ledger consumer wrote (with the source queue ARN Lambda's event
// gives it), its records and holds, and the relay's routes from the template's outputs.
func TestOnceflow_on_the_local_cloud(t *testing.T) {
	t.Parallel() // on a cloud of its own (workloadtest.Start), under its own names
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	c := &localCLI{bin: build(t)}
	cloud := workloadtest.Start(ctx, t, template, "cli", nil)
	ep := cloud.Endpoints()
	c.state = cloud.State
	acct := fmt.Sprintf("cli-%d", time.Now().UnixNano())

	// A credit through the API, applied by the ledger.
	req, _ := http.NewRequestWithContext(ctx, "POST", ep.APIURL+"/accounts/"+acct+"/credits", strings.NewReader(`{"amount":700,"reference":"cli-1"}`))
	resp, err := ep.APIClient("payments", "ledger.write").Do(req)
	if err != nil || resp.StatusCode != 202 {
		t.Fatalf("credit = %v, %v", resp, err)
	}
	resp.Body.Close()
	items, err := outbox.Find(ctx, ep.DynamoDBClient(), ep.Tables["AppTable"].Name, outbox.Selection{})
	if err != nil || len(items) != 1 || items[0].EventType != "account.credited" {
		t.Fatalf("outbox = %+v, %v; want the credit", items, err)
	}
	credit := items[0].EventID
	eventually(t, "the ledger's record of the credit", func() bool {
		_, out := c.run(t, "", "record", "get", "--consumer", "ledger", credit)
		return strings.Contains(out, `"outcome": "applied"`)
	})
	if code, out := c.run(t, "", "outbox", "republish", "--event-id", credit); code != 0 || !strings.Contains(out, "sent "+credit+"  account.credited  subject "+acct+" -> "+ep.Queues["LedgerQueue"].URL) {
		t.Errorf("outbox republish: %d; want the credit sent to the ledger queue (the template's OutboxRoutes output)", code)
	}
	// A typo is answered with the names the local cloud has.
	if code, out := c.run(t, "", "record", "get", "--consumer", "ledgr", credit); code != 2 || !strings.Contains(out, "ledger, note-notifier, note-tagger") {
		t.Errorf("record get --consumer ledgr: %d; want a usage error naming the consumers (the ConsumerNames output)", code)
	}
	if code, out := c.run(t, "", "dlq", "list", "--queue", "LedgerDLQ"); code != 2 || !strings.Contains(out, "LedgerDeadLetterQueue, LedgerQueue") {
		t.Errorf("dlq list --queue LedgerDLQ: %d; want a usage error naming the queues", code)
	}

	// A message the ledger cannot handle: dead-lettered with its reason and source, its group held.
	if _, err := ep.SQSClient().SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: aws.String(ep.Queues["LedgerQueue"].URL),
		MessageGroupId: aws.String(acct + "-x"), MessageDeduplicationId: aws.String("cli-bad-1"),
		MessageBody: aws.String(`{"specversion":"1.0","id":"cli-bad-1","source":"test","type":"account.frozen","subject":"x"}`)}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the dead letter", func() bool {
		_, out := c.run(t, "", "dlq", "list", "--queue", "LedgerDeadLetterQueue")
		return strings.Contains(out, "event cli-bad-1")
	})
	if _, out := c.run(t, "", "dlq", "show", "--queue", "LedgerDeadLetterQueue", "cli-bad-1"); !strings.Contains(out, "account.frozen") ||
		!strings.Contains(out, ep.Queues["LedgerQueue"].ARN) || !strings.Contains(out, "group id:          "+acct+"-x") {
		t.Error("dlq show: want the letter's reason, its source queue and group")
	}
	if _, out := c.run(t, "", "hold", "get", "--consumer", "ledger", acct+"-x"); !strings.Contains(out, "HELD") || !strings.Contains(out, "cli-bad-1") {
		t.Error("hold get: want the group held behind cli-bad-1 (the ledger's HoldGroup)")
	}
	// The runbook for a malformed message: discard it (recorded, the group released).
	if code, out := c.run(t, "", "dlq", "discard", "--queue", "LedgerDeadLetterQueue", "--consumer", "ledger", "--why", "producer bug",
		"--yes", "cli-bad-1"); code != 0 || !strings.Contains(out, "as discarded") {
		t.Errorf("dlq discard: %d; want the letter's event recorded as discarded", code)
	}
	if _, out := c.run(t, "", "record", "get", "--consumer", "ledger", "cli-bad-1"); !strings.Contains(out, `"outcome": "discarded"`) ||
		!strings.Contains(out, acct+"-x: not held") {
		t.Error("record get after discard: want the discarded record and its group not held")
	}
	if _, out := c.run(t, "", "dlq", "list", "--queue", "LedgerDeadLetterQueue"); strings.Contains(out, "event cli-bad-1") {
		t.Error("the discarded letter is still in the dead-letter queue")
	}

	// --as: the same command through the gatekeeper, authorised as a principal of the template
	// would be on AWS: the API's role reads the ledger's holds (a held movement's status), the
	// note-tagger's does not.
	if code, out := c.run(t, "", "hold", "get", "--consumer", "ledger", acct+"-x", "--as", "ApiFunction"); code != 0 || !strings.Contains(out, "not held") {
		t.Errorf("hold get --as ApiFunction: %d; want the hold read, the API's role granting it:\n%s", code, out)
	}
	code, out := c.run(t, "", "hold", "get", "--consumer", "ledger", acct+"-x", "--as", "NoteTaggerFunction")
	if code == 0 || !strings.Contains(out, "AccessDeniedException") ||
		!strings.Contains(out, "assumed-role/NoteTaggerFunctionRole/NoteTaggerFunction is not authorized to perform: dynamodb:GetItem") {
		t.Errorf("hold get --as NoteTaggerFunction: %d; want the read of the ledger's hold refused by the gatekeeper, as DynamoDB refuses it:\n%s", code, out)
	}
	if code, out := c.run(t, "", "record", "get", "--consumer", "ledger", credit, "--as", "Nobody"); code != 2 || !strings.Contains(out, "ApiFunction, LedgerFunction") {
		t.Errorf("record get --as Nobody: %d; want a usage error naming the principals", code)
	}
}

// template is the repository's template.yaml, from this package's directory.
var template = filepath.Join("..", "..", "..", "template.yaml")

// build builds the tool into a temporary directory and returns its path.
func build(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "onceflow")
	if out, err := exec.CommandContext(t.Context(), "go", "build", "-o", bin, "..").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

type localCLI struct {
	bin, state string
	as         string // the principal it calls as (--as), unless args name one
}

// run runs the tool with args on the local cloud and returns its exit status and output.
func (c *localCLI) run(t *testing.T, stdin string, args ...string) (int, string) {
	t.Helper()
	var out strings.Builder
	args = append(args, "--local", "--state", c.state)
	if c.as != "" && !slices.Contains(args, "--as") {
		args = append(args, "--as", c.as)
	}
	cmd := exec.CommandContext(t.Context(), c.bin, args...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = strings.NewReader(stdin), &out, &out
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		return ee.ExitCode(), out.String()
	case err != nil:
		t.Fatalf("onceflow %s: %v", strings.Join(args, " "), err)
	}
	return 0, out.String()
}

// eventually waits until ok, failing the test after a bound set for a loaded machine.
func eventually(t *testing.T, what string, ok func() bool) {
	t.Helper()
	const bound = 2 * time.Minute
	for deadline := time.Now().Add(bound); !ok(); time.Sleep(300 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("after %v: no %s", bound, what)
		}
	}
}
