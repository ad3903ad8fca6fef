package app_test

import (
	"context"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/onceflow/onceflow/internal/app"
	"github.com/onceflow/onceflow/internal/config"
	"github.com/onceflow/onceflow/internal/testenv"
	"github.com/onceflow/onceflow/pkg/operator"
)

// A note.created event delivered again after the tagger's record expired (a replay from an
// archive, a redrive later than the retention) finds the note tagged and counts nothing twice.
func TestNoteTagger_a_note_delivered_again_after_its_record_expired_is_counted_once(t *testing.T) {
	s := newSystem(t)
	batch := sqsSample(t, "note-tagger-batch.json")
	s.seedNotes(t, batch)
	handle(t, s.tagger, batch)
	for _, rec := range batch.Records {
		key := operator.Key("note-tagger", "note-created-"+rec.Attributes["MessageGroupId"])
		if _, err := s.db.DeleteItem(context.Background(), &dynamodb.DeleteItemInput{TableName: aws.String(s.idem),
			Key: map[string]types.AttributeValue{"pk": &types.AttributeValueMemberS{Value: key}}}); err != nil {
			t.Fatal(err)
		}
	}
	s.logs.Reset()
	fresh, err := app.NewNoteTagger(config.Consumer{Name: "note-tagger", AppTable: s.app, IdempotencyTable: s.idem,
		DeadLetterQueueURL: s.notesDLQ, Retention: config.DefaultRetention},
		app.Deps{DynamoDB: s.db, SQS: s.sqs, Logger: slog.New(slog.NewJSONHandler(s.logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	handle(t, fresh, batch)

	for _, tag := range []string{"travel", "lisbon", "weekly", "food"} {
		if status, body := s.get(t, "/tags/"+tag); status != http.StatusOK || !strings.Contains(body, `"count":1`) {
			t.Fatalf("tag %s = %d %s; want count 1", tag, status, body)
		}
	}
	if got := strings.Count(s.logs.String(), `"outcome":"duplicate"`); got != 2 {
		t.Fatalf("logs = %s; want both notes reported as duplicates", s.logs)
	}
}

// The note-notifier's webhook call is outside DynamoDB: after its record expired a redelivery
// calls again, with the same Idempotency-Key, which the receiver must honour.
func TestNoteNotifier_a_note_delivered_again_after_its_record_expired_calls_again_with_the_same_key(t *testing.T) {
	s := newSystem(t)
	batch := sqsSample(t, "note-notifier-batch.json")
	handle(t, s.notifier, batch)
	for _, rec := range s.items(t, s.idem, "note-notifier#") {
		if _, err := s.db.DeleteItem(context.Background(), &dynamodb.DeleteItemInput{TableName: aws.String(s.idem),
			Key: map[string]types.AttributeValue{"pk": &types.AttributeValueMemberS{Value: rec["pk"].(string)}}}); err != nil {
			t.Fatal(err)
		}
	}
	params := testenv.Parameters(t, map[string]string{"/test/webhook/url": s.hook.URL, "/test/webhook/secret": s.hook.Secret})
	fresh, err := app.NewNoteNotifier(config.Notifier{Name: "note-notifier", IdempotencyTable: s.idem,
		DeadLetterQueueURL: s.notificationsDLQ, Retention: config.DefaultRetention,
		WebhookURLParameter: "/test/webhook/url", WebhookSecretParameter: "/test/webhook/secret"},
		app.Deps{DynamoDB: s.db, SQS: s.sqs, SSM: params, Logger: slog.New(slog.NewJSONHandler(s.logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	handle(t, fresh, batch)
	got := s.hook.keys()
	slices.Sort(got)
	want := []string{hookKey("note-7f3a"), hookKey("note-7f3a"), hookKey("note-91c2"), hookKey("note-91c2")}
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Fatalf("webhook keys = %v; want each note's one key, twice", got)
	}
}
