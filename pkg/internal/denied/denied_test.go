package denied_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/smithy-go"

	"github.com/onceflow/onceflow/pkg/internal/denied"
	"github.com/onceflow/onceflow/pkg/testkit/fault"
)

// Denied reads an access denial as each SDK client reports AWS's answer (here a proxy's in
// front of the emulators, in AWS's exact form): the service, operation and code, and the
// principal, permission and resource IAM's message names.
func TestDenied_reads_each_services_denial_as_the_SDK_reports_it(t *testing.T) {
	db, _ := fault.DynamoDBDenying(t, fault.Deny{Action: "dynamodb:GetItem"})
	sqsQuery, _ := fault.SQSDenying(t, fault.Deny{Action: "sqs:SendMessage", QueryError: true})
	sqsJSON, _ := fault.SQSDenying(t, fault.Deny{Action: "sqs:SendMessage"})
	s3c, _ := fault.S3Denying(t, fault.Deny{Action: "s3:GetObject"})
	queue := "https://sqs.us-east-1.amazonaws.com/000000000000/q.fifo"
	cases := []struct {
		name                                string
		call                                func() error
		service, op, code, action, resource string
	}{
		{"DynamoDB", func() error {
			_, err := db.GetItem(t.Context(), &dynamodb.GetItemInput{TableName: aws.String("t"),
				Key: map[string]types.AttributeValue{"pk": &types.AttributeValueMemberS{Value: "k"}}})
			return err
		}, "DynamoDB", "GetItem", "AccessDeniedException", "dynamodb:GetItem", "arn:aws:dynamodb:us-east-1:000000000000:table/t"},
		{"SQS, query-compatible", func() error {
			_, err := sqsQuery.SendMessage(t.Context(), &sqs.SendMessageInput{QueueUrl: aws.String(queue), MessageBody: aws.String("x")})
			return err
		}, "SQS", "SendMessage", "AccessDenied", "sqs:sendmessage", "arn:aws:sqs:us-east-1:000000000000:q.fifo"},
		{"SQS, JSON", func() error {
			_, err := sqsJSON.SendMessage(t.Context(), &sqs.SendMessageInput{QueueUrl: aws.String(queue), MessageBody: aws.String("x")})
			return err
		}, "SQS", "SendMessage", "AccessDeniedException", "sqs:sendmessage", "arn:aws:sqs:us-east-1:000000000000:q.fifo"},
		{"S3", func() error {
			_, err := s3c.GetObject(t.Context(), &s3.GetObjectInput{Bucket: aws.String("b"), Key: aws.String("k/1")})
			return err
		}, "S3", "GetObject", "AccessDenied", "s3:GetObject", "arn:aws:s3:::b/k/1"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := fmt.Errorf("wrapped: %w", c.call())
			d, ok := denied.Of(err)
			if !ok {
				t.Fatalf("Of(%v) = false; want a denial", err)
			}
			got := fmt.Sprint(d.Service, " ", d.Operation, " ", d.Code, " ", d.Action, " ", d.Resource, " ", d.Principal)
			want := fmt.Sprint(c.service, " ", c.op, " ", c.code, " ", c.action, " ", c.resource, " ", fault.Principal)
			if got != want {
				t.Errorf("denial %s; want %s", got, want)
			}
			if !errors.Is(d, denied.ErrAccessDenied) || !strings.Contains(d.Error(), c.action+" on "+c.resource) {
				t.Errorf("%v: want it to match ErrAccessDenied and say %s on %s", d, c.action, c.resource)
			}
		})
	}
}

// What is not a denial is not taken for one, and a denial AWS's message does not explain
// (S3's older "Access Denied") still names the operation refused.
func TestDenied_names_the_operation_when_the_message_names_no_permission(t *testing.T) {
	for _, err := range []error{nil, errors.New("AccessDenied"), &smithy.GenericAPIError{Code: "ThrottlingException"},
		&smithy.GenericAPIError{Code: "UnrecognizedClientException", Message: "The security token included in the request is invalid."}} {
		if denied.Is(err) {
			t.Errorf("Is(%v) = true; want false", err)
		}
	}
	err := &smithy.OperationError{ServiceID: "S3", OperationName: "GetObject", Err: &smithy.GenericAPIError{Code: "AccessDenied", Message: "Access Denied"}}
	d, ok := denied.Of(err)
	if !ok || d.Action != "" || !strings.Contains(d.Permission(), "S3 GetObject") {
		t.Errorf("Denied = %+v, %v; want a denial whose permission names S3 GetObject", d, ok)
	}
}
