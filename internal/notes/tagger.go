package notes

import (
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/onceflow/onceflow/pkg/cloudevent"
	"github.com/onceflow/onceflow/pkg/idempotency"
)

// ReasonNoteMissing is the rejection reason when the tagged note does not exist.
const ReasonNoteMissing = "note not found"

// membership is a note-tag membership item.
type membership struct {
	PK     string `dynamodbav:"pk"`
	SK     string `dynamodbav:"sk"`
	Kind   string `dynamodbav:"kind"`
	Tag    string `dynamodbav:"tag"`
	NoteID string `dynamodbav:"noteId"`
}

// Tagger returns the note-tagger's handler: note.created events only, decided by TagEffect.
func Tagger(table string) *idempotency.Router {
	r := idempotency.NewRouter()
	idempotency.Route(r, Created, func(ev cloudevent.Event, d CreatedData) (idempotency.Effect, error) {
		return TagEffect(table, ev, d)
	})
	return r
}

// TagEffect is the effect of tagging a created note: its tag set, and per tag a counter
// increment and a membership item. At most 2*MaxTags+1 writes, well under the transaction
// limit. The note must exist; if not, the event is rejected.
func TagEffect(table string, ev cloudevent.Event, d CreatedData) (idempotency.Effect, error) {
	if ev.Subject != d.NoteID {
		return idempotency.Effect{}, cloudevent.Malformed("subject", "%q is not data.noteId %q", ev.Subject, d.NoteID)
	}
	tags := Tags(d.Title, d.Content)
	note, err := expression.NewBuilder().
		WithUpdate(expression.Set(expression.Name("tags"), expression.Value(tags))).
		WithCondition(expression.AttributeExists(expression.Name("pk"))).Build()
	if err != nil {
		return idempotency.Effect{}, fmt.Errorf("tag note %s: %w", d.NoteID, err)
	}
	writes := []idempotency.Write{{Reason: ReasonNoteMissing, TransactWriteItem: types.TransactWriteItem{Update: &types.Update{
		TableName: aws.String(table), Key: Key(d.NoteID), UpdateExpression: note.Update(),
		ConditionExpression: note.Condition(), ExpressionAttributeNames: note.Names(),
		ExpressionAttributeValues: note.Values()}}}}
	for _, tag := range tags {
		count, err := expression.NewBuilder().WithUpdate(expression.
			Add(expression.Name("count"), expression.Value(1)).
			Set(expression.Name("tag"), expression.Value(tag)).
			Set(expression.Name("kind"), expression.Value("tagCount"))).Build()
		if err != nil {
			return idempotency.Effect{}, fmt.Errorf("count tag %s: %w", tag, err)
		}
		member, err := attributevalue.MarshalMap(membership{PK: "TAG#" + tag, SK: "NOTE#" + d.NoteID,
			Kind: "noteTag", Tag: tag, NoteID: d.NoteID})
		if err != nil {
			return idempotency.Effect{}, fmt.Errorf("marshal tag %s of %s: %w", tag, d.NoteID, err)
		}
		writes = append(writes,
			idempotency.Write{TransactWriteItem: types.TransactWriteItem{Update: &types.Update{
				TableName: aws.String(table), Key: TagKey(tag), UpdateExpression: count.Update(),
				ExpressionAttributeNames: count.Names(), ExpressionAttributeValues: count.Values()}}},
			idempotency.Write{TransactWriteItem: types.TransactWriteItem{Put: &types.Put{
				TableName: aws.String(table), Item: member}}})
	}
	return idempotency.Effect{Writes: writes}, nil
}
