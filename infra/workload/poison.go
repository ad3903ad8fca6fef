package workload

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/onceflow/onceflow/internal/ledger"
	"github.com/onceflow/onceflow/pkg/idempotency"
	"github.com/onceflow/onceflow/pkg/operator"
	"github.com/onceflow/onceflow/pkg/outbox"
)

// The kinds of a producer's bad message the drill sends, as the runbook names its incidents.
const (
	poisonMalformed = "malformed" // an event of the account with invalid data (amount 0)
	poisonConflict  = "conflict"  // an applied event's id reused with another payload
)

// poison is a producer's bad message the drill sent to an account's group of the ledger's queue.
type poison struct {
	account, kind, eventID string
	body                   string // as sent, for the producer's re-send of it once discarded
	// skip: the drill lets the group go on past it (hold skip, its letter moved behind the
	// held tail), redrives, and discards it once it is dead-lettered again, unheld.
	skip bool
}

// poisonKind is the kind of the i-th poisoned account's bad message: a malformed one the
// drill skips first (hold skip), then discards; a conflict; a malformed one; and again. The
// producer sends each malformed one again once it is discarded.
func poisonKind(i int) (kind string, skip bool) {
	switch i % 3 {
	case 0:
		return poisonMalformed, true
	case 1:
		return poisonConflict, false
	}
	return poisonMalformed, false
}

// sendPoison sends account's bad message of kind straight to the ledger's queue in the
// account's group, as a producer with a bug would: built from an event of the account the
// ledger has applied already (its outbox item's body), the malformed one under a new event id
// with amount 0, the conflict one under the applied event's id with another amount. ok is false
// when the ledger has applied no event of the account yet.
func (r *run) sendPoison(ctx context.Context, led consumer, account, kind string) (poison, bool, error) {
	p := poison{account: account, kind: kind}
	body, id, ok, err := r.appliedBody(ctx, led.Name, account)
	if err != nil || !ok {
		return p, false, err
	}
	var ev map[string]any
	if err := json.Unmarshal([]byte(body), &ev); err != nil {
		return p, false, fmt.Errorf("poison %s: decode %s: %w", account, id, err)
	}
	data, _ := ev["data"].(map[string]any)
	if data == nil {
		return p, false, fmt.Errorf("poison %s: event %s has no data", account, id)
	}
	switch kind {
	case poisonMalformed:
		p.eventID = fmt.Sprintf("poison-%s-%d", account, r.cfg.Seed)
		ev["id"], data["amount"] = p.eventID, 0
	default:
		p.eventID = id
		amount, _ := data["amount"].(float64)
		data["amount"] = int64(amount)%ledger.MaxAmount + 1
	}
	b, err := json.Marshal(ev)
	if err != nil {
		return p, false, err
	}
	p.body = string(b)
	if err := r.sendBody(ctx, led, account, p.body, "poison-"+kind+"-"+p.eventID); err != nil {
		return p, false, fmt.Errorf("poison %s: %w", account, err)
	}
	return p, true, nil
}

// sendBody sends body to the consumer's queue in account's group, deduplicated by dedup.
func (r *run) sendBody(ctx context.Context, led consumer, account, body, dedup string) error {
	_, err := r.sqs.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: aws.String(led.QueueURL), MessageBody: aws.String(body),
		MessageGroupId: aws.String(account), MessageDeduplicationId: aws.String(dedup)})
	if err != nil {
		return fmt.Errorf("send: %w", err)
	}
	return nil
}

// appliedBody returns the body of an event of account that consumer has applied, and its id.
func (r *run) appliedBody(ctx context.Context, consumer, account string) (body, id string, ok bool, err error) {
	key := expression.Key("pk").Equal(expression.Value("OUTBOX#" + account))
	expr, err := expression.NewBuilder().WithKeyCondition(key).Build()
	if err != nil {
		return "", "", false, err
	}
	out, err := r.ddb.Query(ctx, &dynamodb.QueryInput{TableName: aws.String(r.t.appTable), KeyConditionExpression: expr.KeyCondition(),
		ExpressionAttributeNames: expr.Names(), ExpressionAttributeValues: expr.Values(), ConsistentRead: aws.Bool(true)})
	if err != nil {
		return "", "", false, fmt.Errorf("outbox of %s: %w", account, err)
	}
	admin := operator.New(r.ddb, r.t.idemTable)
	for _, it := range out.Items {
		var item outbox.Item
		if attributevalue.UnmarshalMap(it, &item) != nil || item.Body == "" {
			continue
		}
		rec, found, err := admin.Record(ctx, consumer, item.EventID)
		if err != nil {
			return "", "", false, err
		}
		if found && rec.Outcome == string(idempotency.Applied) {
			return item.Body, item.EventID, true, nil
		}
	}
	return "", "", false, nil
}
