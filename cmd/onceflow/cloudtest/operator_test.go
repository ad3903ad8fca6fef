package cloudtest_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/onceflow/onceflow/infra/workload/workloadtest"
)

// Every command of the runbook, run by the built tool through the local cloud's gatekeeper as
// the template's OperatorPolicy alone (a role with that managed policy and nothing else), on
// letters and holds the real ledger wrote: each is authorised as IAM would authorise it on AWS,
// and the gatekeeper denies the operator nothing. (TestOnceflow_on_the_local_cloud shows the
// gatekeeper refusing a role that lacks a grant.)
func TestOnceflow_runbook_commands_pass_the_gatekeeper_under_the_operator_policy_alone(t *testing.T) {
	t.Parallel() // on a cloud of its own (workloadtest.Start), under its own names
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	cloud := workloadtest.Start(ctx, t, template, "ops", nil)
	ep := cloud.Endpoints()
	if _, ok := ep.Principals["OperatorPolicy"]; !ok || ep.Gatekeeper == "" {
		t.Fatalf("the local cloud has no OperatorPolicy principal behind a gatekeeper (principals %v)", ep.Principals)
	}
	c := &localCLI{bin: build(t), state: cloud.State, as: "OperatorPolicy"}
	run := func(args ...string) string {
		t.Helper()
		code, out := c.run(t, "", args...)
		if code != 0 {
			t.Errorf("onceflow %s (as OperatorPolicy): exit %d\n%s", strings.Join(args, " "), code, out)
		}
		return out
	}
	acct := fmt.Sprintf("ops-%d", time.Now().UnixNano())
	poison := func(group, id string) {
		t.Helper()
		if _, err := ep.SQSClient().SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: aws.String(ep.Queues["LedgerQueue"].URL),
			MessageGroupId: aws.String(group), MessageDeduplicationId: aws.String(id),
			MessageBody: aws.String(`{"specversion":"1.0","id":"` + id + `","source":"test","type":"account.frozen","subject":"` + group + `"}`)}); err != nil {
			t.Fatal(err)
		}
		eventually(t, "the dead letter of "+id, func() bool {
			_, out := c.run(t, "", "dlq", "list", "--queue", "LedgerDeadLetterQueue")
			return strings.Contains(out, "event "+id)
		})
	}
	credit := func(group, ref string) {
		t.Helper()
		req, _ := http.NewRequestWithContext(ctx, "POST", ep.APIURL+"/accounts/"+group+"/credits", strings.NewReader(`{"amount":5,"reference":"`+ref+`"}`))
		resp, err := ep.APIClient("payments", "ledger.write").Do(req)
		if err != nil || resp.StatusCode != 202 {
			t.Fatalf("credit = %v, %v", resp, err)
		}
		resp.Body.Close()
	}

	// Malformed: list, show, the record and the hold, discard.
	poison(acct+"-a", acct+"-bad-a")
	run("dlq", "show", "--queue", "LedgerDeadLetterQueue", acct+"-bad-a")
	run("record", "get", "--consumer", "ledger", acct+"-bad-a")
	run("hold", "get", "--consumer", "ledger", acct+"-a")
	if out := run("dlq", "discard", "--queue", "LedgerDeadLetterQueue", "--consumer", "ledger", "--why", "producer bug", "--yes", acct+"-bad-a"); !strings.Contains(out, "as discarded") {
		t.Errorf("dlq discard: want the event recorded as discarded:\n%s", out)
	}

	// Skip, then redrive (dry run, then for real); release; record delete.
	poison(acct+"-b", acct+"-bad-b")
	credit(acct+"-b", acct+"-live-b")
	// The skip acts only on the hold it showed: the credit is to be held behind the blocker
	// before it, or the credit's arrival changes the hold between the skip's read and its
	// write and the skip is refused (as it must be).
	eventually(t, "the credit held behind "+acct+"-bad-b", func() bool {
		_, out := c.run(t, "", "hold", "get", "--consumer", "ledger", acct+"-b")
		return strings.Contains(out, `"reason": "held behind event `+acct+`-bad-b"`)
	})
	run("hold", "skip", "--consumer", "ledger", "--why", "go on past it", "--yes", "--queue", "LedgerDeadLetterQueue", acct+"-b")
	run("dlq", "redrive", "--queue", "LedgerDeadLetterQueue", "--dry-run")
	run("dlq", "redrive", "--queue", "LedgerDeadLetterQueue")
	poison(acct+"-c", acct+"-bad-c")
	run("hold", "release", "--consumer", "ledger", "--yes", acct+"-c")
	run("record", "delete", "--consumer", "ledger", "--yes", acct+"-bad-a")

	// A letter past SQS's 1 MiB (a body 300 bytes under it, with the attributes the ledger
	// adds): the ledger writes it as a claim check under dead-letters/ledger/, and dlq show
	// reads it back through S3 as the operator.
	head := `{"specversion":"1.0","id":"` + acct + `-big","source":"test","type":"account.frozen","subject":"` + acct + `-d","data":{"pad":"`
	big := head + strings.Repeat("x", 1<<20-300-len(head)-3) + `"}}`
	if _, err := ep.SQSClient().SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: aws.String(ep.Queues["LedgerQueue"].URL),
		MessageGroupId: aws.String(acct + "-d"), MessageDeduplicationId: aws.String(acct + "-big"), MessageBody: aws.String(big)}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the offloaded dead letter", func() bool {
		_, out := c.run(t, "", "dlq", "list", "--queue", "LedgerDeadLetterQueue")
		return strings.Contains(out, "event "+acct+"-big")
	})
	if out := run("dlq", "show", "--queue", "LedgerDeadLetterQueue", acct+"-big"); !strings.Contains(out, "dead-letters/ledger/") || !strings.Contains(out, "body (1048276 bytes)") {
		t.Errorf("dlq show of the offloaded letter: want its pointer under dead-letters/ledger/ and its body read back:\n%.2000s", out)
	}

	// The relay's path: find an outbox event and send it again.
	run("outbox", "republish", "--since", "1h", "--dry-run")
	run("outbox", "republish", "--since", "1h")

	access := cloud.Access()
	if ps := access.ByPrincipal["OperatorPolicy"]; ps.Authorized == 0 || ps.Denied != 0 {
		var denied []string
		for _, d := range access.Denials {
			if d.Principal == "OperatorPolicy" {
				denied = append(denied, d.Action+" on "+d.Resource)
			}
		}
		t.Errorf("the gatekeeper authorised %d of OperatorPolicy's calls and denied %d; want every call authorised, none denied (denied: %v)",
			ps.Authorized, ps.Denied, denied)
	}
}
