package notes

import (
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"

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

// TagEffect is the effect of tagging a created note: per tag a membership item and a counter
// increment, and the note's tag set with the time it was tagged (the event's). At most 2*MaxTags+1 writes, well under the transaction
// limit. The note must exist; if not, the event is rejected. A membership is written only if
// new (OrDuplicate): a note delivered again after the consumer's record expired is a
// duplicate, and no counter is incremented twice. The memberships come first, so that their
// conditions are the ones DynamoDB reports.
func TagEffect(table string, ev cloudevent.Event, d CreatedData) (idempotency.Effect, error) {
	if ev.Subject != d.NoteID {
		return nil, cloudevent.Malformed("subject", "%q is not data.noteId %q", ev.Subject, d.NoteID)
	}
	tags := Tags(d.Title, d.Content)
	isNew := expression.AttributeNotExists(expression.Name("pk"))
	var effect idempotency.Effect
	for _, tag := range tags {
		effect = append(effect,
			idempotency.Put(table, membership{PK: "TAG#" + tag, SK: "NOTE#" + d.NoteID,
				Kind: "noteTag", Tag: tag, NoteID: d.NoteID}).If(isNew).OrDuplicate(),
			idempotency.Update(table, TagKey(tag), expression.
				Add(expression.Name("count"), expression.Value(1)).
				Set(expression.Name("tag"), expression.Value(tag)).
				Set(expression.Name("kind"), expression.Value("tagCount"))))
	}
	return append(effect, idempotency.Update(table, Key(d.NoteID),
		expression.Set(expression.Name("tags"), expression.Value(tags)).
			Set(expression.Name("taggedAt"), expression.Value(ev.Time.UTC().Format(time.RFC3339Nano)))).
		If(expression.AttributeExists(expression.Name("pk"))).OrReject(ReasonNoteMissing)), nil
}
