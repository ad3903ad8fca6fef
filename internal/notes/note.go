package notes

import (
	"fmt"
	"time"
	"unicode/utf8"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/onceflow/onceflow/pkg/cloudevent"
	"github.com/onceflow/onceflow/pkg/outbox"
)

// Event types and the source of the events this package publishes.
const (
	Created = "note.created"
	Source  = "onceflow/api"
)

// Limits on a note's fields: the title in characters, the content in bytes of UTF-8. They keep
// the note item, its outbox item and its message (whose JSON may escape a byte as six) well
// under DynamoDB's 400 KB item and SQS's message limit (1 MiB, or 256 KiB on an old queue).
const (
	MaxTitle   = 200
	MaxContent = 32 * 1024
)

// Note is a note item.
type Note struct {
	PK        string   `dynamodbav:"pk" json:"-"`
	SK        string   `dynamodbav:"sk" json:"-"`
	Kind      string   `dynamodbav:"kind" json:"-"`
	ID        string   `dynamodbav:"id" json:"id"`
	Title     string   `dynamodbav:"title" json:"title"`
	Content   string   `dynamodbav:"content" json:"content"`
	Tags      []string `dynamodbav:"tags,omitempty" json:"tags"`
	CreatedAt string   `dynamodbav:"createdAt" json:"createdAt"`
	TaggedAt  string   `dynamodbav:"taggedAt,omitempty" json:"-"` // set by the note-tagger: the event's time
}

// Key returns the primary key of note id.
func Key(id string) map[string]types.AttributeValue {
	return map[string]types.AttributeValue{
		"pk": &types.AttributeValueMemberS{Value: "NOTE#" + id},
		"sk": &types.AttributeValueMemberS{Value: "NOTE"},
	}
}

// TagKey returns the primary key of the counter of tag.
func TagKey(tag string) map[string]types.AttributeValue {
	return map[string]types.AttributeValue{
		"pk": &types.AttributeValueMemberS{Value: "TAG#" + tag},
		"sk": &types.AttributeValueMemberS{Value: "COUNT"},
	}
}

// CreatedData is the data of a note.created event.
type CreatedData struct {
	NoteID  string `json:"noteId"`
	Title   string `json:"title"`
	Content string `json:"content"`
}

// Validate reports the first invalid field.
func (d CreatedData) Validate() error {
	switch {
	case d.NoteID == "":
		return cloudevent.Malformed("data.noteId", "missing")
	case d.Title == "":
		return cloudevent.Malformed("data.title", "missing")
	case utf8.RuneCountInString(d.Title) > MaxTitle:
		return cloudevent.Malformed("data.title", "longer than %d characters", MaxTitle)
	case len(d.Content) > MaxContent:
		return cloudevent.Malformed("data.content", "longer than %d bytes", MaxContent)
	}
	return nil
}

// CreatedEventID is the stable id of the note.created event of note id.
func CreatedEventID(noteID string) string { return "note-created-" + noteID }

// Create returns the writes that create note id with its note.created outbox event, to commit
// in one transaction. The note's put fails if the id exists. opts go to the outbox item (the
// request's trace, outbox.WithTrace).
func Create(table, id, title, content string, now time.Time, opts ...outbox.PutOption) ([]types.TransactWriteItem, Note, error) {
	data := CreatedData{NoteID: id, Title: title, Content: content}
	if err := data.Validate(); err != nil {
		return nil, Note{}, err
	}
	n := Note{PK: "NOTE#" + id, SK: "NOTE", Kind: "note", ID: id, Title: title, Content: content,
		Tags: []string{}, CreatedAt: now.UTC().Format(time.RFC3339Nano)}
	ev, err := cloudevent.New(CreatedEventID(id), Source, Created, id, now, data)
	if err != nil {
		return nil, Note{}, err
	}
	ob, err := outbox.Put(table, ev, now, opts...)
	if err != nil {
		return nil, Note{}, err
	}
	item, err := attributevalue.MarshalMap(n)
	if err != nil {
		return nil, Note{}, fmt.Errorf("marshal note %s: %w", id, err)
	}
	cond, err := expression.NewBuilder().WithCondition(expression.AttributeNotExists(expression.Name("pk"))).Build()
	if err != nil {
		return nil, Note{}, fmt.Errorf("note condition: %w", err)
	}
	put := types.TransactWriteItem{Put: &types.Put{TableName: aws.String(table), Item: item,
		ConditionExpression: cond.Condition(), ExpressionAttributeNames: cond.Names()}}
	return []types.TransactWriteItem{put, ob}, n, nil
}
