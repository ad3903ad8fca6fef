package localcloud_test

import (
	"context"
	"errors"
	"fmt"
	"net/http/httptest"
	"regexp"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/smithy-go"

	"github.com/onceflow/onceflow/infra/localcloud"
	"github.com/onceflow/onceflow/pkg/testkit"
)

// Every fault the proxy injects reaches the SDK as an error its standard retryer retries,
// with the service's own error code, and never as another answer.
func TestFaultProxy_every_fault_is_an_error_the_SDK_retries(t *testing.T) {
	ddbURL, sqsURL := testkit.Emulator(t, testkit.EndpointVariable), testkit.Emulator(t, testkit.SQSEndpointVariable)
	ctx := context.Background()
	table := createTable(t, ddbURL)
	cases := []struct {
		name, kind, code string
		chaos            localcloud.Chaos
	}{
		{"throttling is a DynamoDB throttling error", localcloud.FaultThrottle, "Throttl|ProvisionedThroughputExceeded", localcloud.Chaos{Throttle: 1}},
		{"a 500 is InternalServerError", localcloud.FaultServerError, "InternalServerError", localcloud.Chaos{ServerError: 1}},
		{"a conflict cancels the transaction with TransactionConflict", localcloud.FaultConflict, "TransactionCanceledException", localcloud.Chaos{Conflict: 1}},
		{"a reset before forwarding is a network error", localcloud.FaultResetBefore, "", localcloud.Chaos{ResetBefore: 1}},
		{"a reset after the answer is a network error, the write done", localcloud.FaultResetAfter, "", localcloud.Chaos{ResetAfter: 1}},
	}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h, counts := localcloud.NewFaultProxy("dynamodb", ddbURL, tc.chaos)
			srv := httptest.NewServer(h)
			defer srv.Close()
			client := ddbClient(srv.URL, 1)
			key := fmt.Sprintf("k%d", i)
			in := &dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{
				{Put: &types.Put{TableName: aws.String(table), Item: map[string]types.AttributeValue{"pk": &types.AttributeValueMemberS{Value: key}},
					ConditionExpression: aws.String("attribute_not_exists(pk)")}},
				{Put: &types.Put{TableName: aws.String(table), Item: map[string]types.AttributeValue{"pk": &types.AttributeValueMemberS{Value: key + "b"}}}},
			}}
			_, err := client.TransactWriteItems(ctx, in)
			if err == nil {
				t.Fatal("no error")
			}
			if !retry.NewStandard().IsErrorRetryable(err) && tc.kind != localcloud.FaultConflict {
				t.Errorf("the SDK's standard retryer does not retry %v", err)
			}
			checkCode(t, err, tc.code)
			if tc.kind == localcloud.FaultConflict {
				checkConflict(t, err)
			}
			if got := counts()[tc.kind]; got != 1 {
				t.Errorf("counted %d %s, want 1", got, tc.kind)
			}
			got, gerr := ddbClient(ddbURL, 0).GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(table),
				Key: map[string]types.AttributeValue{"pk": &types.AttributeValueMemberS{Value: key}}, ConsistentRead: aws.Bool(true)})
			if gerr != nil {
				t.Fatal(gerr)
			}
			if applied := got.Item != nil; applied != (tc.kind == localcloud.FaultResetAfter) {
				t.Errorf("write applied: %v, want it applied only when the reset came after the answer", applied)
			}
			if tc.kind != localcloud.FaultResetAfter {
				return
			}
			// The ambiguous commit: the SDK's retry carries the same ClientRequestToken, so
			// DynamoDB answers it as the write that took effect, not as a cancellation.
			direct := ddbClient(ddbURL, 0)
			if in.ClientRequestToken == nil {
				t.Fatal("the SDK set no ClientRequestToken on the input: a retry would be cancelled by its own write")
			}
			if _, err := direct.TransactWriteItems(ctx, in); err != nil {
				t.Errorf("retry of the committed transaction with its token: %v, want success", err)
			}
		})
	}
	t.Run("SQS throttling is RequestThrottled, retried", func(t *testing.T) {
		h, _ := localcloud.NewFaultProxy("sqs", sqsURL, localcloud.Chaos{Throttle: 1})
		srv := httptest.NewServer(h)
		defer srv.Close()
		client := sqs.NewFromConfig(localcloud.AWSConfig(), func(o *sqs.Options) { o.BaseEndpoint, o.RetryMaxAttempts = aws.String(srv.URL), 1 })
		_, err := client.ListQueues(ctx, &sqs.ListQueuesInput{})
		if err == nil || !retry.NewStandard().IsErrorRetryable(err) {
			t.Fatalf("err %v, want one the SDK retries", err)
		}
		checkCode(t, err, "RequestThrottled")
	})
	t.Run("latency delays the request, which then succeeds", func(t *testing.T) {
		h, counts := localcloud.NewFaultProxy("dynamodb", ddbURL, localcloud.Chaos{Latency: 1, MaxLatency: 50 * time.Millisecond})
		srv := httptest.NewServer(h)
		defer srv.Close()
		client := ddbClient(srv.URL, 1)
		if _, err := client.ListTables(ctx, &dynamodb.ListTablesInput{}); err != nil {
			t.Fatal(err)
		}
		if counts()[localcloud.FaultLatency] != 1 {
			t.Errorf("latency not counted: %v", counts())
		}
	})
}

func ddbClient(endpoint string, attempts int) *dynamodb.Client {
	return dynamodb.NewFromConfig(localcloud.AWSConfig(), func(o *dynamodb.Options) {
		o.BaseEndpoint, o.RetryMaxAttempts = aws.String(endpoint), attempts
	})
}

func createTable(t *testing.T, endpoint string) string {
	t.Helper()
	name := fmt.Sprintf("chaos-%d", time.Now().UnixNano())
	_, err := ddbClient(endpoint, 0).CreateTable(context.Background(), &dynamodb.CreateTableInput{TableName: aws.String(name),
		AttributeDefinitions: []types.AttributeDefinition{{AttributeName: aws.String("pk"), AttributeType: types.ScalarAttributeTypeS}},
		KeySchema:            []types.KeySchemaElement{{AttributeName: aws.String("pk"), KeyType: types.KeyTypeHash}},
		BillingMode:          types.BillingModePayPerRequest})
	if err != nil {
		t.Fatal(err)
	}
	return name
}

// checkCode checks that err is an API error whose code matches pattern ("" for none: a
// network error).
func checkCode(t *testing.T, err error, pattern string) {
	t.Helper()
	var api smithy.APIError
	isAPI := errors.As(err, &api)
	switch {
	case pattern == "" && isAPI:
		t.Errorf("got API error %s, want a network error", api.ErrorCode())
	case pattern != "" && !isAPI:
		t.Errorf("got %v, want an API error %s", err, pattern)
	case pattern != "" && !regexp.MustCompile(pattern).MatchString(api.ErrorCode()):
		t.Errorf("error code %s, want %s", api.ErrorCode(), pattern)
	}
}

// checkConflict checks DynamoDB's shape: one reason per item, a TransactionConflict among Nones.
func checkConflict(t *testing.T, err error) {
	t.Helper()
	var tce *types.TransactionCanceledException
	if !errors.As(err, &tce) {
		t.Fatalf("got %T, want *types.TransactionCanceledException", err)
	}
	codes := []string{}
	for _, r := range tce.CancellationReasons {
		codes = append(codes, aws.ToString(r.Code))
	}
	if fmt.Sprint(codes) != "[None TransactionConflict]" {
		t.Errorf("reasons %v, want [None TransactionConflict]", codes)
	}
}
