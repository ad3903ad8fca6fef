package localcloud_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/onceflow/onceflow/infra/localcloud"
	"github.com/onceflow/onceflow/internal/ledger"
	"github.com/onceflow/onceflow/pkg/cloudevent"
	"github.com/onceflow/onceflow/pkg/operator"
	"github.com/onceflow/onceflow/pkg/testkit"
)

// killer stands between the functions and DynamoDB Local and kills the ledger's environment
// whenever it commits the poison event: as a crash or running out of memory would, every
// invocation that handles it dies before its commit lands, and nothing of it is counted.
type killer struct {
	proxy  *httputil.ReverseProxy
	poison string
	cloud  atomic.Pointer[localcloud.Cloud]
	kills  atomic.Int64
}

func (k *killer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	r.Body = io.NopCloser(bytes.NewReader(body))
	if c := k.cloud.Load(); c != nil && strings.HasSuffix(r.Header.Get("X-Amz-Target"), ".TransactWriteItems") &&
		bytes.Contains(body, []byte(k.poison)) {
		if err := c.Kill("LedgerFunction", 1); err == nil {
			k.kills.Add(1)
		}
		if hj, ok := w.(http.Hijacker); ok { // the request never lands: the process died first
			if conn, _, err := hj.Hijack(); err == nil {
				conn.Close()
				return
			}
		}
	}
	k.proxy.ServeHTTP(w, r)
}

// A ledger message whose every invocation is killed is moved to the dead-letter queue by the
// queue's own redrive policy (maxReceiveCount 3 here), which the engine never counts; its
// account is held behind it all the same: the function, told its queue's maxReceiveCount,
// wrote the hold naming it before handling it on its last receives. The account's later
// movements are held (dead-lettered behind it), never applied; other accounts go on.
func TestLocalCloud_a_message_the_queue_moves_by_itself_holds_its_account(t *testing.T) {
	t.Parallel() // on a cloud and a proxy of its own
	ddbURL, sqsURL := testkit.Emulator(t, testkit.EndpointVariable), testkit.Emulator(t, testkit.SQSEndpointVariable)
	target, err := url.Parse(ddbURL)
	if err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	movement := func(account, ref string) cloudevent.Event {
		ev, err := ledger.NewEvent(ledger.Credited, account, ref, 100, at)
		if err != nil {
			t.Fatal(err)
		}
		return ev
	}
	suffix := strconv.FormatInt(time.Now().UnixNano(), 36)
	held, other := "held-"+suffix, "other-"+suffix
	poison := movement(held, "poison")
	k := &killer{proxy: httputil.NewSingleHostReverseProxy(target), poison: poison.ID}
	srv := httptest.NewServer(k)
	defer srv.Close()

	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	c, err := localcloud.Start(ctx, localcloud.Config{
		Template: "testdata/backstop/template.yaml", StateDir: t.TempDir(), Prefix: "bs" + suffix,
		DynamoDBEndpoint: srv.URL, SQSEndpoint: sqsURL, VisibilityTimeout: 1,
		Environments: map[string]int{"LedgerFunction": 1}, Install: true,
	})
	if err != nil {
		t.Fatalf("start the local cloud: %v", err)
	}
	defer c.Close()
	k.cloud.Store(c)
	ep := c.Endpoints()
	q, dlq := ep.Queues["LedgerQueue"].URL, ep.Queues["LedgerDeadLetterQueue"].URL
	sqsc := testkit.SQS(t)
	send := func(ev cloudevent.Event) string { // its message id
		t.Helper()
		body, err := cloudevent.Encode(ev)
		if err != nil {
			t.Fatal(err)
		}
		out, err := sqsc.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: aws.String(q), MessageBody: aws.String(string(body)),
			MessageGroupId: aws.String(ev.Subject), MessageDeduplicationId: aws.String(ev.ID)})
		if err != nil {
			t.Fatal(err)
		}
		return aws.ToString(out.MessageId)
	}
	inDLQ := func() int {
		out, err := sqsc.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{QueueUrl: aws.String(dlq),
			AttributeNames: []sqstypes.QueueAttributeName{sqstypes.QueueAttributeNameApproximateNumberOfMessages,
				sqstypes.QueueAttributeNameApproximateNumberOfMessagesNotVisible}})
		if err != nil {
			t.Fatal(err)
		}
		n, _ := strconv.Atoi(out.Attributes[string(sqstypes.QueueAttributeNameApproximateNumberOfMessages)])
		m, _ := strconv.Atoi(out.Attributes[string(sqstypes.QueueAttributeNameApproximateNumberOfMessagesNotVisible)])
		return n + m
	}
	db := testkit.DynamoDB(t)

	poisonMessage := send(poison)
	testkit.Eventually(t, time.Minute, func() error {
		if n := inDLQ(); n < 1 {
			return fmt.Errorf("dead-letter queue holds %d; want the poison moved by the queue (%d kills so far)", n, k.kills.Load())
		}
		return nil
	})
	if got := k.kills.Load(); got < 3 {
		t.Errorf("%d invocations killed; want every one of the 3 receives the queue allows", got)
	}
	hold, ok, err := operator.New(db, ep.Tables["IdempotencyTable"].Name).Hold(ctx, "ledger", held)
	// Held before it was decoded: by its message id.
	if err != nil || !ok || hold.BlockerMessage != poisonMessage {
		t.Fatalf("account %s's hold = %+v, %v, %v; want it held behind the poison, message %s", held, hold, ok, err, poisonMessage)
	}

	send(movement(held, "later"))
	send(movement(other, "1"))
	testkit.Eventually(t, time.Minute, func() error {
		if n := inDLQ(); n < 2 {
			return fmt.Errorf("dead-letter queue holds %d; want the account's later movement held behind the poison", n)
		}
		if !accountItem(t, db, ep.Tables["AppTable"].Name, other) {
			return fmt.Errorf("account %s has no balance: another account's movement not applied yet", other)
		}
		return nil
	})
	if accountItem(t, db, ep.Tables["AppTable"].Name, held) {
		t.Errorf("account %s has a balance: a movement was applied past the poison the queue moved", held)
	}
}

// accountItem reports whether the account has an item (a movement was applied to it).
func accountItem(t *testing.T, db *dynamodb.Client, table, account string) bool {
	t.Helper()
	out, err := db.GetItem(t.Context(), &dynamodb.GetItemInput{TableName: aws.String(table),
		Key: ledger.AccountKey(account), ConsistentRead: aws.Bool(true)})
	if err != nil {
		t.Fatal(err)
	}
	return out.Item != nil
}
