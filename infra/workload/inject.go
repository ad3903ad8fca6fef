package workload

import (
	"context"
	"fmt"
	"math/rand/v2"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/onceflow/onceflow/pkg/outbox"
)

// malformedBodies are messages no consumer can ever process, one per kind of problem; %s is a
// unique marker that finds the message again in the dead-letter queue.
var malformedBodies = []string{
	`this is not JSON %s`,
	`{"specversion":"1.0","source":"workload","type":"note.created","subject":"%s","data":{}}`,
	`{"specversion":"1.0","id":"%s","source":"workload","type":"workload.unknown","subject":"x","data":{},"data":{}}`,
}

// injectMalformed sends n malformed messages to each consumer queue and returns their markers
// by dead-letter queue URL.
func injectMalformed(ctx context.Context, client *sqs.Client, t *topology, n int) (map[string][]string, error) {
	out := map[string][]string{}
	for _, c := range t.consumers {
		for i := range n {
			marker := fmt.Sprintf("malformed-%s-%d", c.Name, i)
			body := fmt.Sprintf(malformedBodies[i%len(malformedBodies)], marker)
			_, err := client.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: aws.String(c.QueueURL),
				MessageBody: aws.String(body), MessageGroupId: aws.String(marker), MessageDeduplicationId: aws.String(marker)})
			if err != nil {
				return out, fmt.Errorf("inject malformed message into %s: %w", c.Queue, err)
			}
			out[c.DLQURL] = append(out[c.DLQURL], marker)
		}
	}
	return out, nil
}

// resendStats counts the re-sends.
type resendStats struct {
	events   int // events re-sent
	messages int // new messages the re-sends created
	deduped  int // repeated sends SQS deduplicated (same message id answered)
}

// resend re-sends a share of the accepted events straight to every queue the relay routes them
// to, exactly as the relay published them (the outbox item's body and subject) but under a new
// deduplication id, as a producer re-sending after SQS's 5-minute deduplication window would.
// Each re-send is sent twice with the same new id, as a producer retrying a send whose answer
// it lost: SQS must deduplicate the second.
func resend(ctx context.Context, ddb *dynamodb.Client, client *sqs.Client, t *topology, evs []eventRef, rate float64, seed int64) (resendStats, error) {
	var st resendStats
	rng := rand.New(rand.NewPCG(uint64(seed), 0x5e5e))
	for _, ev := range evs {
		if rng.Float64() >= rate {
			continue
		}
		id := ev.id
		got, err := ddb.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(t.appTable), Key: outbox.Key(ev.subject, id), ConsistentRead: aws.Bool(true)})
		if err != nil {
			return st, fmt.Errorf("read outbox item %s: %w", id, err)
		}
		var item outbox.Item
		if err := attributevalue.UnmarshalMap(got.Item, &item); err != nil || item.Body == "" {
			return st, fmt.Errorf("outbox item %s: missing or undecodable (%v)", id, err)
		}
		st.events++
		for _, url := range t.routes[item.EventType] {
			in := &sqs.SendMessageInput{QueueUrl: aws.String(url), MessageBody: aws.String(item.Body),
				MessageGroupId: aws.String(item.Subject), MessageDeduplicationId: aws.String("resend-" + id)}
			first, err := client.SendMessage(ctx, in)
			if err != nil {
				return st, fmt.Errorf("re-send %s: %w", id, err)
			}
			again, err := client.SendMessage(ctx, in)
			if err != nil {
				return st, fmt.Errorf("re-send %s again: %w", id, err)
			}
			st.messages++
			if aws.ToString(again.MessageId) == aws.ToString(first.MessageId) {
				st.deduped++
			}
		}
	}
	return st, nil
}
