package localcloud_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/smithy-go"

	"github.com/onceflow/onceflow/infra/gatekeeper"
	"github.com/onceflow/onceflow/infra/localcloud"
	"github.com/onceflow/onceflow/pkg/claimcheck"
	"github.com/onceflow/onceflow/pkg/testkit"
)

// as returns the configuration of a principal of the shared cloud, through its gatekeeper.
func as(t *testing.T, ep localcloud.Endpoints, principal string) aws.Config {
	t.Helper()
	cfg, err := ep.ConfigAs(principal)
	if err != nil {
		t.Fatal(err)
	}
	cfg.RetryMaxAttempts = 1
	return cfg
}

func errorCode(err error) string {
	var ae smithy.APIError
	if errors.As(err, &ae) {
		return ae.ErrorCode()
	}
	return fmt.Sprint(err)
}

// Each function calls as its own role: what the template grants it passes to the emulator,
// what it does not is refused as AWS refuses it, counted per principal, with the statement
// that came closest.
func TestGatekeeper_authorises_each_function_as_its_role(t *testing.T) {
	c := cloud(t)
	ep := c.Endpoints()
	ctx := context.Background()
	table := ep.Tables["NotesTable"].Name
	put := func(principal, pk string) error {
		_, err := dynamodb.NewFromConfig(as(t, ep, principal)).PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(table),
			Item: map[string]types.AttributeValue{"pk": &types.AttributeValueMemberS{Value: pk}}})
		return err
	}
	id := fmt.Sprint(time.Now().UnixNano())
	before := c.Access()
	tests := []struct {
		name, principal, pk, code string
	}{
		{"a policy template's table (DynamoDBWritePolicy)", "SQSConsumer", "sqs#gk-" + id, ""},
		{"a leading key its statement names", "StreamConsumer", "seen#gk-" + id, ""},
		{"a leading key outside its statement", "StreamConsumer", "other#gk-" + id, "AccessDeniedException"},
		{"a function with no table in its role", "Echo", "x#gk-" + id, "AccessDeniedException"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := put(tt.principal, tt.pk)
			if got := errorCode(err); (tt.code == "" && err != nil) || (tt.code != "" && got != tt.code) {
				t.Fatalf("%s PutItem %s: %v; want %q", tt.principal, tt.pk, err, tt.code)
			}
			_, gerr := getItem(ep, tt.pk)
			if (gerr == nil) != (tt.code == "") {
				t.Errorf("item %s exists: %v; want it only when the put was allowed", tt.pk, gerr == nil)
			}
		})
	}
	after := c.Access()
	if d := after.ByPrincipal["StreamConsumer"].Denied - before.ByPrincipal["StreamConsumer"].Denied; d != 1 {
		t.Errorf("StreamConsumer denied %d more calls; want 1", d)
	}
	i := slices.IndexFunc(after.Denials, func(d gatekeeper.Denial) bool {
		return d.Principal == "StreamConsumer" && d.Action == "dynamodb:PutItem"
	})
	if i < 0 || after.Denials[i].Resource != "arn:aws:dynamodb:us-east-1:000000000000:table/"+table ||
		!strings.Contains(after.Denials[i].Closest, "StreamConsumerRolePolicy0 statement 0") || !strings.Contains(after.Denials[i].Why, "other#gk-"+id) {
		t.Errorf("denials %+v; want StreamConsumer's PutItem on its table, its statement the closest, the key named", after.Denials)
	}
	// The cloud's own identity is no principal: at the gatekeeper it is refused.
	_, err := dynamodb.NewFromConfig(aws.Config{Region: localcloud.Region, Credentials: localcloud.AWSConfig().Credentials,
		BaseEndpoint: aws.String(ep.Gatekeeper), RetryMaxAttempts: 1}).GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(table),
		Key: map[string]types.AttributeValue{"pk": &types.AttributeValueMemberS{Value: "x"}}})
	if errorCode(err) != "UnrecognizedClientException" {
		t.Errorf("the admin key at the gatekeeper: %v; want UnrecognizedClientException", err)
	}
}

// The SQS event source mapping polls as its function (ReceiveMessage and DeleteMessage through
// the gatekeeper, as Lambda polls with the execution role), and its function writes as itself.
func TestGatekeeper_the_pollers_call_as_their_function(t *testing.T) {
	c := cloud(t)
	ep := c.Endpoints()
	before := c.Access().ByPrincipal["SQSConsumer"].Authorized
	body := fmt.Sprintf("gk-poll-%d", time.Now().UnixNano())
	if _, err := ep.SQSClient().SendMessage(context.Background(), &sqs.SendMessageInput{QueueUrl: aws.String(ep.Queues["NotesQueue"].URL),
		MessageBody: aws.String(body), MessageGroupId: aws.String(body)}); err != nil {
		t.Fatal(err)
	}
	testkit.Eventually(t, 20*time.Second, func() error {
		_, err := getItem(ep, "sqs#"+body)
		return err
	})
	// at least a receive, the function's put and the delete, which follows the put: waited for
	testkit.Eventually(t, 20*time.Second, func() error {
		if n := c.Access().ByPrincipal["SQSConsumer"].Authorized - before; n < 3 {
			return fmt.Errorf("%d calls authorised as SQSConsumer; want the poller's receive and delete and the function's put", n)
		}
		return nil
	})
}

// A claim check pointing at a bucket the role cannot read is refused by the gatekeeper, as S3
// refuses it: the reader gets AccessDenied and no byte of the object.
func TestGatekeeper_refuses_a_claim_check_its_role_cannot_read(t *testing.T) {
	c := cloud(t)
	ep := c.Endpoints()
	ctx := context.Background()
	bucket := ep.Buckets["Payloads"].Name
	admin := ep.S3Client()
	w, err := claimcheck.NewWriter(admin, claimcheck.WriterConfig{Bucket: bucket})
	if err != nil {
		t.Fatal(err)
	}
	ptr, err := w.Offload(ctx, `{"secret":"not for the SQS consumer"}`) // as a producer with the right to write it
	if err != nil {
		t.Fatal(err)
	}
	reader, err := claimcheck.NewReader(s3.NewFromConfig(as(t, ep, "SQSConsumer"), func(o *s3.Options) { o.UsePathStyle = true }),
		claimcheck.ReaderConfig{Buckets: []string{bucket}})
	if err != nil {
		t.Fatal(err)
	}
	payload := `{"secret":"not for the SQS consumer"}`
	got, err := reader.Payload(ctx, events.SQSMessage{Body: ptr.Body(), MessageAttributes: map[string]events.SQSMessageAttribute{
		claimcheck.SizeAttribute: {DataType: "Number", StringValue: aws.String(claimcheck.SizeAttributeValue(len(payload)))}}})
	if errorCode(err) != "AccessDenied" || strings.Contains(got, "secret") {
		t.Fatalf("read %q, %v; want AccessDenied and nothing read", got, err)
	}
	d := c.Access().Denials
	if !slices.ContainsFunc(d, func(d gatekeeper.Denial) bool {
		return d.Principal == "SQSConsumer" && d.Action == "s3:GetObject" && strings.HasPrefix(d.Resource, "arn:aws:s3:::"+bucket+"/")
	}) {
		t.Errorf("denials %+v; want SQSConsumer's s3:GetObject on the object", d)
	}
}
