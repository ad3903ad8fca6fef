package notes

import (
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

// TagEffect is the effect of tagging a created note: its tag set, and per tag a counter
// increment and a membership item. At most 2*MaxTags+1 writes, well under the transaction
// limit. The note must exist; if not, the event is rejected.
func TagEffect(table string, ev cloudevent.Event, d CreatedData) (idempotency.Effect, error) {
	if ev.Subject != d.NoteID {
		return nil, cloudevent.Malformed("subject", "%q is not data.noteId %q", ev.Subject, d.NoteID)
	}
	tags := Tags(d.Title, d.Content)
	effect := idempotency.Effect{idempotency.Update(table, Key(d.NoteID),
		expression.Set(expression.Name("tags"), expression.Value(tags))).
		If(expression.AttributeExists(expression.Name("pk"))).OrReject(ReasonNoteMissing)}
	for _, tag := range tags {
		effect = append(effect,
			idempotency.Update(table, TagKey(tag), expression.
				Add(expression.Name("count"), expression.Value(1)).
				Set(expression.Name("tag"), expression.Value(tag)).
				Set(expression.Name("kind"), expression.Value("tagCount"))),
			idempotency.Put(table, membership{PK: "TAG#" + tag, SK: "NOTE#" + d.NoteID,
				Kind: "noteTag", Tag: tag, NoteID: d.NoteID}))
	}
	return effect, nil
}
