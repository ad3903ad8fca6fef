package localcloud_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/onceflow/onceflow/infra/localcloud"
)

func getItem(ep localcloud.Endpoints, pk string) (map[string]types.AttributeValue, error) {
	out, err := ep.DynamoDBClient().GetItem(context.Background(), &dynamodb.GetItemInput{
		TableName: aws.String(ep.Tables["NotesTable"].Name), ConsistentRead: aws.Bool(true),
		Key: map[string]types.AttributeValue{"pk": &types.AttributeValueMemberS{Value: pk}}})
	if err != nil {
		return nil, err
	}
	if out.Item == nil {
		return nil, fmt.Errorf("no item %s", pk)
	}
	return out.Item, nil
}

func str(item map[string]types.AttributeValue, k string) string {
	if s, ok := item[k].(*types.AttributeValueMemberS); ok {
		return s.Value
	}
	return ""
}

func TestSQSPoller_deletes_successes_and_dead_letters_failures(t *testing.T) {
	ep := cloud(t).Endpoints()
	ctx, q := context.Background(), ep.SQSClient()
	queue, dlq := ep.Queues["NotesQueue"], ep.Queues["NotesDLQ"]
	id := fmt.Sprint(time.Now().UnixNano())
	bodies := map[string]string{"ok-" + id + "-a": "g1", "ok-" + id + "-b": "g2", "fail-" + id: "g3"}
	for body, group := range bodies {
		if _, err := q.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: aws.String(queue.URL),
			MessageBody: aws.String(body), MessageGroupId: aws.String(group + id)}); err != nil {
			t.Fatal(err)
		}
	}
	for body, group := range bodies {
		if strings.HasPrefix(body, "fail") {
			continue
		}
		eventually(t, 20*time.Second, func() error {
			item, err := getItem(ep, "sqs#"+body)
			if err != nil {
				return err
			}
			if g, src := str(item, "group"), str(item, "source"); g != group+id || src != "aws:sqs "+queue.ARN {
				return fmt.Errorf("event attributes: group %q source %q", g, src)
			}
			return nil
		})
	}
	// The failed message comes back after each visibility timeout (2 s) and, past
	// maxReceiveCount (2), moves to the dead-letter queue.
	var dead []sqstypes.Message
	eventually(t, 30*time.Second, func() error {
		out, err := q.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: aws.String(dlq.URL),
			MaxNumberOfMessages: 10, WaitTimeSeconds: 1})
		if err != nil {
			return err
		}
		dead = append(dead, out.Messages...)
		if len(dead) == 0 {
			return fmt.Errorf("nothing in the dead-letter queue yet")
		}
		return nil
	})
	if len(dead) != 1 || aws.ToString(dead[0].Body) != "fail-"+id {
		t.Fatalf("dead letters = %v, want only fail-%s", bodies, id)
	}
	eventually(t, 10*time.Second, func() error {
		out, err := q.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{QueueUrl: aws.String(queue.URL),
			AttributeNames: []sqstypes.QueueAttributeName{sqstypes.QueueAttributeNameApproximateNumberOfMessages,
				sqstypes.QueueAttributeNameApproximateNumberOfMessagesNotVisible}})
		if err != nil {
			return err
		}
		if a := out.Attributes; a["ApproximateNumberOfMessages"] != "0" || a["ApproximateNumberOfMessagesNotVisible"] != "0" {
			return fmt.Errorf("queue still holds messages: %v", a)
		}
		return nil
	})
}

func TestStreamPoller_delivers_inserts(t *testing.T) {
	ep := cloud(t).Endpoints()
	pk := fmt.Sprintf("note#%d", time.Now().UnixNano())
	_, err := ep.DynamoDBClient().PutItem(context.Background(), &dynamodb.PutItemInput{
		TableName: aws.String(ep.Tables["NotesTable"].Name),
		Item: map[string]types.AttributeValue{"pk": &types.AttributeValueMemberS{Value: pk},
			"text": &types.AttributeValueMemberS{Value: "hello stream"}}})
	if err != nil {
		t.Fatal(err)
	}
	eventually(t, 20*time.Second, func() error {
		item, err := getItem(ep, "seen#"+pk)
		if err != nil {
			return err
		}
		want := "aws:dynamodb " + ep.Tables["NotesTable"].StreamARN
		if str(item, "text") != "hello stream" || str(item, "source") != want || str(item, "seq") == "" {
			return fmt.Errorf("stream consumer saw %v, want text, source %q and a sequence number", item, want)
		}
		return nil
	})
}
