package localcloud_test

import (
	"context"
	"net/url"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/onceflow/onceflow/infra/localcloud"
)

// A queue URL from endpoints.json works as it is: its host is the SQS emulator's loopback
// address, so a client pointed at the URL's own host reaches the queue.
func TestEndpoints_queue_URLs_point_at_the_loopback_emulator(t *testing.T) {
	ep := cloud(t).Endpoints()
	sqsURL, err := url.Parse(ep.SQS)
	if err != nil {
		t.Fatal(err)
	}
	for id, q := range ep.Queues {
		u, err := url.Parse(q.URL)
		if err != nil {
			t.Fatalf("%s: %v", id, err)
		}
		if u.Host != sqsURL.Host {
			t.Errorf("%s: URL %s, want host %s", id, q.URL, sqsURL.Host)
			continue
		}
		client := sqs.NewFromConfig(localcloud.AWSConfig(), func(o *sqs.Options) {
			o.BaseEndpoint = aws.String(u.Scheme + "://" + u.Host)
		})
		_, err = client.GetQueueAttributes(context.Background(), &sqs.GetQueueAttributesInput{
			QueueUrl: aws.String(q.URL), AttributeNames: []sqstypes.QueueAttributeName{sqstypes.QueueAttributeNameQueueArn}})
		if err != nil {
			t.Errorf("%s: GetQueueAttributes at its own URL: %v", id, err)
		}
	}
	if len(ep.Queues) == 0 {
		t.Fatal("no queues in the endpoints")
	}
}
