package workload_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/onceflow/onceflow/infra/localcloud"
	"github.com/onceflow/onceflow/infra/workload/workloadtest"
	"github.com/onceflow/onceflow/pkg/testkit"
)

// relayMapping is the stream event source of the relay in Stats.Mappings.
const relayMapping = "OutboxRelayFunction/OutboxStream"

// An SQS outage between the relay and the queues that outlasts the 10 retries the relay's
// stream mapping once allowed: every movement is still published, once and in its account's
// order (a debit published before the credit it needs would be rejected for insufficient
// funds), and nothing is given up to the on-failure queue.
func TestRelay_keeps_every_account_in_order_through_an_SQS_outage_longer_than_ten_retries(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	cloud := workloadtest.Start(ctx, t, template, "outage", func(cfg *localcloud.Config) {
		cfg.Chaos = localcloud.Chaos{Outages: true} // one stream shard: every attempt retries its head
	})
	ep := cloud.Endpoints()
	end, err := cloud.Outage("sqs")
	if err != nil {
		t.Fatal(err)
	}
	defer end()

	// Each account: a credit, then debits that each need every movement before them.
	run := time.Now().UnixNano()
	moves := []struct {
		kind   string
		amount int
	}{{"credits", 100}, {"debits", 60}, {"debits", 30}, {"credits", 5}, {"debits", 15}}
	writer := ep.APIClient("relay-outage", "ledger.write")
	var accounts []string
	for a := range 4 {
		acct := fmt.Sprintf("outage-%d-%d", run, a)
		accounts = append(accounts, acct)
		for i, m := range moves {
			body := fmt.Sprintf(`{"amount":%d,"reference":"r%d"}`, m.amount, i)
			if st, out := call(t, writer, http.MethodPost, ep.APIURL+"/accounts/"+acct+"/"+m.kind, body); st != http.StatusAccepted {
				t.Fatalf("%s %s: %d %v", acct, m.kind, st, out)
			}
		}
	}

	// The outage lasts until the relay's mapping has invoked it, and failed, more often than the
	// first attempt and 10 retries of its shard's head record.
	testkit.Eventually(t, 3*time.Minute, func() error { // about 30 s alone: bounds for a loaded machine
		s := cloud.Stats().Mappings[relayMapping]
		if s.Discarded > 0 {
			return nil // the old give-up: asserted below
		}
		if s.Succeeded > 0 || s.Batches <= 11 {
			return fmt.Errorf("relay mapping %+v during the outage, want more than 11 failed batches", s)
		}
		return nil
	})
	end()
	outage := cloud.Stats()
	t.Logf("outage over: relay mapping %+v, %d SQS requests refused", outage.Mappings[relayMapping], outage.Faults[localcloud.FaultOutage])
	if d := outage.Mappings[relayMapping].Discarded; d > 0 {
		t.Errorf("the relay's stream mapping discarded %d records during the outage, want none", d)
	}

	reader := ep.APIClient("relay-outage", "ledger.read")
	for _, acct := range accounts {
		testkit.Eventually(t, 2*time.Minute, func() error {
			for i := range moves {
				st, out := call(t, reader, http.MethodGet, fmt.Sprintf("%s/accounts/%s/movements/r%d", ep.APIURL, acct, i), "")
				if st != http.StatusOK || out["status"] != "applied" {
					return fmt.Errorf("%s movement r%d: %d %v, want applied", acct, i, st, out)
				}
			}
			return nil
		})
		st, out := call(t, reader, http.MethodGet, ep.APIURL+"/accounts/"+acct, "")
		entries, _ := out["entries"].([]any)
		if st != http.StatusOK || out["balance"] != float64(0) || len(entries) != len(moves) {
			t.Errorf("%s: %d balance %v with %d entries, want 0 with %d", acct, st, out["balance"], len(entries), len(moves))
		}
	}
	if n := failureQueueDepth(ctx, t, ep); n != 0 {
		t.Errorf("%d messages in the relay's on-failure queue, want none", n)
	}
	if s := cloud.Stats().Mappings[relayMapping]; s.Discarded != 0 {
		t.Errorf("relay mapping %+v: want nothing discarded", s)
	}
}

// failureQueueDepth counts the messages of the relay's on-failure queue.
func failureQueueDepth(ctx context.Context, t *testing.T, ep localcloud.Endpoints) int {
	t.Helper()
	q, ok := ep.Queues["OutboxRelayFailureQueue"]
	if !ok {
		t.Fatal("no OutboxRelayFailureQueue in the local cloud")
	}
	out, err := ep.SQSClient().GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{QueueUrl: aws.String(q.URL),
		AttributeNames: []sqstypes.QueueAttributeName{sqstypes.QueueAttributeNameApproximateNumberOfMessages,
			sqstypes.QueueAttributeNameApproximateNumberOfMessagesNotVisible}})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, v := range out.Attributes {
		var k int
		_, _ = fmt.Sscan(strings.TrimSpace(v), &k)
		n += k
	}
	return n
}
