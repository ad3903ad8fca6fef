package dlq

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"
)

// QueueAttributesAPI is the SQS call SourceQueue makes; *sqs.Client implements it.
type QueueAttributesAPI interface {
	GetQueueAttributes(ctx context.Context, params *sqs.GetQueueAttributesInput, optFns ...func(*sqs.Options)) (*sqs.GetQueueAttributesOutput, error)
}

// SourceQueue returns, among the queues at candidates (URLs), the one whose redrive policy
// moves its messages to the dead-letter queue at dlqURL: where a letter SQS moved by itself,
// which names no source queue, goes back to (RedriveConfig.Source). ok is false unless exactly
// one does.
func SourceQueue(ctx context.Context, client QueueAttributesAPI, dlqURL string, candidates []string) (url string, ok bool, err error) {
	dlq, err := client.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{QueueUrl: aws.String(dlqURL),
		AttributeNames: []types.QueueAttributeName{types.QueueAttributeNameQueueArn}})
	if err != nil {
		return "", false, fmt.Errorf("read dead-letter queue %s: %w", dlqURL, err)
	}
	var found []string
	for _, c := range candidates {
		if c == dlqURL {
			continue
		}
		out, err := client.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{QueueUrl: aws.String(c),
			AttributeNames: []types.QueueAttributeName{types.QueueAttributeNameRedrivePolicy}})
		if err != nil {
			return "", false, fmt.Errorf("read queue %s: %w", c, err)
		}
		var policy struct {
			Target string `json:"deadLetterTargetArn"`
		}
		if p := out.Attributes[string(types.QueueAttributeNameRedrivePolicy)]; p != "" && json.Unmarshal([]byte(p), &policy) == nil &&
			policy.Target == dlq.Attributes[string(types.QueueAttributeNameQueueArn)] {
			found = append(found, c)
		}
	}
	if len(found) != 1 {
		return "", false, nil
	}
	return found[0], true, nil
}
