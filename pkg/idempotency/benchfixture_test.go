package idempotency_test

import (
	"context"
	"testing"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/onceflow/onceflow/pkg/cloudevent"
	"github.com/onceflow/onceflow/pkg/idempotency"
	"github.com/onceflow/onceflow/pkg/internal/applytest"
	"github.com/onceflow/onceflow/pkg/internal/testenv"
	"github.com/onceflow/onceflow/pkg/testkit"
)

// note is the benchmark's event data: a note of realistic size.
type note struct {
	NoteID  string `json:"noteId"`
	Title   string `json:"title"`
	Content string `json:"content"`
}

func newBenchFixture(b *testing.B) *fixture {
	f := &fixture{&applytest.Fixture{Requests: &testenv.Requests{}}}
	f.DB = testkit.DynamoDB(b, dynamodb.WithAPIOptions(f.Requests.Middleware))
	f.App = testkit.Table(b, f.DB, "bench-app", "pk", "sk")
	f.Records = testkit.Table(b, f.DB, "bench-idem", "pk")
	return f
}

func testenvName() string { return testkit.Name("b") }

func (f *fixture) noteMessage(tb testing.TB, id string) events.SQSMessage {
	return applytest.Message(tb, "m-"+id, id, "note.created", note{NoteID: id, Title: "Quarterly #planning notes",
		Content: "Agenda: #budget review, #hiring plan, roadmap for the next quarter and open questions."})
}

// noteItem is the effect of a note event: one Put of the note item.
func (f *fixture) noteItem(ev cloudevent.Event) map[string]types.AttributeValue {
	return map[string]types.AttributeValue{
		"pk":      &types.AttributeValueMemberS{Value: "NOTE#" + ev.ID},
		"sk":      &types.AttributeValueMemberS{Value: "NOTE"},
		"payload": &types.AttributeValueMemberS{Value: string(ev.Data)},
	}
}

func (f *fixture) noteHandler() idempotency.Handler {
	return idempotency.HandlerFunc(func(_ context.Context, ev cloudevent.Event) (idempotency.Effect, error) {
		return idempotency.Effect{idempotency.Put(f.App, f.noteItem(ev))}, nil
	})
}
