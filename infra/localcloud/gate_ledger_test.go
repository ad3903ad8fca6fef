package localcloud_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/onceflow/onceflow/infra/gatekeeper"
	"github.com/onceflow/onceflow/infra/localcloud"
	"github.com/onceflow/onceflow/internal/ledger"
	"github.com/onceflow/onceflow/pkg/cloudevent"
	"github.com/onceflow/onceflow/pkg/testkit"
)

// conditionCheck is the ledger's statement that lets its commits check their account's hold;
// the ledger's role had none before the gatekeeper found that every commit needs it.
const conditionCheck = `            - Effect: Allow
              Action: [dynamodb:ConditionCheckItem]
              Resource: !GetAtt IdempotencyTable.Arn
              Condition:
                ForAllValues:StringLike:
                  dynamodb:LeadingKeys: ["#hold#ledger#*"]
`

// mutatedBackstop writes testdata/backstop/template.yaml with old replaced by new into a new
// directory, its CodeUri still leading to the ledger's code, and returns the file.
func mutatedBackstop(t *testing.T, old, new string) string {
	t.Helper()
	raw, err := os.ReadFile("testdata/backstop/template.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(raw), old) {
		t.Fatalf("testdata/backstop/template.yaml no longer has %q to change", old)
	}
	dir := t.TempDir()
	code, err := filepath.Abs("../../functions/ledger")
	if err != nil {
		t.Fatal(err)
	}
	rel, err := filepath.Rel(dir, code)
	if err != nil {
		t.Fatal(err)
	}
	text := strings.Replace(string(raw), old, new, 1)
	text = strings.Replace(text, "CodeUri: ../../../../functions/ledger/", "CodeUri: "+rel+"/", 1)
	path := filepath.Join(dir, "template.yaml")
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// The ledger under HoldGroup with the role template.yaml gave it before the gatekeeper: every
// commit checks its account's hold inside its transaction (a ConditionCheck), which IAM
// authorises as dynamodb:ConditionCheckItem, which that role did not grant. The gatekeeper
// refuses the commit as DynamoDB would, names the action, the table and the statement that
// came closest, and nothing of the credit is applied. (With the statement, the backstop test
// above applies the ledger's movements.)
func TestGatekeeper_refuses_the_ledgers_commit_without_ConditionCheckItem(t *testing.T) {
	t.Parallel() // on a cloud of its own
	ddbURL, sqsURL := testkit.Emulator(t, testkit.EndpointVariable), testkit.Emulator(t, testkit.SQSEndpointVariable)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	suffix := strconv.FormatInt(time.Now().UnixNano(), 36)
	c, err := localcloud.Start(ctx, localcloud.Config{
		Template: mutatedBackstop(t, conditionCheck, ""), StateDir: t.TempDir(), Prefix: "gl" + suffix,
		DynamoDBEndpoint: ddbURL, SQSEndpoint: sqsURL, VisibilityTimeout: 1,
		Environments: map[string]int{"LedgerFunction": 1}, Install: true,
	})
	if err != nil {
		t.Fatalf("start the local cloud: %v", err)
	}
	defer c.Close()
	ep := c.Endpoints()
	account := "acc-" + suffix
	ev, err := ledger.NewEvent(ledger.Credited, account, "ref-1", 100, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	body, err := cloudevent.Encode(ev)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ep.SQSClient().SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: aws.String(ep.Queues["LedgerQueue"].URL),
		MessageBody: aws.String(string(body)), MessageGroupId: aws.String(account), MessageDeduplicationId: aws.String(ev.ID)}); err != nil {
		t.Fatal(err)
	}
	idem := "arn:aws:dynamodb:us-east-1:000000000000:table/" + ep.Tables["IdempotencyTable"].Name
	var denial gatekeeper.Denial
	testkit.Eventually(t, time.Minute, func() error {
		d := c.Access().Denials
		i := slices.IndexFunc(d, func(d gatekeeper.Denial) bool { return d.Principal == "LedgerFunction" })
		if i < 0 {
			return fmt.Errorf("no call of the ledger denied yet (%s)", c.Access().Summary())
		}
		denial = d[i]
		return nil
	})
	if denial.Action != "dynamodb:ConditionCheckItem" || denial.Resource != idem ||
		!strings.Contains(denial.Closest, "LedgerFunctionRolePolicy0 statement 1") || !strings.Contains(denial.Why, "do not include dynamodb:ConditionCheckItem") {
		t.Errorf("denial %+v (closest %s: %s); want dynamodb:ConditionCheckItem on %s, the records' statement the closest", denial, denial.Closest, denial.Why, idem)
	}
	if s := c.Access().Summary(); !strings.Contains(s, "LedgerFunction was refused dynamodb:ConditionCheckItem on "+idem) {
		t.Errorf("summary %q; want the refusal named", s)
	}
	if accountItem(t, testkit.DynamoDB(t), ep.Tables["AppTable"].Name, account) {
		t.Errorf("account %s has a balance: the refused commit was applied", account)
	}
}
