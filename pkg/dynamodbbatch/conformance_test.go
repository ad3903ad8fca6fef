package dynamodbbatch_test

import (
	"context"
	"strconv"
	"testing"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/onceflow/onceflow/pkg/batch"
	"github.com/onceflow/onceflow/pkg/batch/batchtest"
	"github.com/onceflow/onceflow/pkg/cloudevent"
	"github.com/onceflow/onceflow/pkg/dynamodbbatch"
	"github.com/onceflow/onceflow/pkg/port"
	"github.com/onceflow/onceflow/pkg/testkit"
)

// dynamoHarness is the DynamoDB Streams port for the conformance suite: each message is a
// write of its group's item (attribute "event" the body) to a table of DynamoDB Local, whose
// stream records are read back as Lambda delivers them and decoded by eventAttribute.
type dynamoHarness struct {
	db     *dynamodb.Client
	source string
	arn    string
	writes int // every write changes the item, so that each one is a stream record
	read   int // records handed out so far
}

// eventAttribute decodes the CloudEvent the writer stored in the item's "event" attribute: a
// key from the image, so that one event written twice is applied once.
func eventAttribute(_ context.Context, rec events.DynamoDBEventRecord) (cloudevent.Event, error) {
	return cloudevent.Decode([]byte(rec.Change.NewImage["event"].String()))
}

func (h *dynamoHarness) Records(t *testing.T, msgs ...batchtest.Message) []events.DynamoDBEventRecord {
	t.Helper()
	for _, m := range msgs {
		h.writes++
		if _, err := h.db.PutItem(t.Context(), &dynamodb.PutItemInput{TableName: aws.String(h.source), Item: map[string]types.AttributeValue{
			"pk": &types.AttributeValueMemberS{Value: m.Group}, "sk": &types.AttributeValueMemberS{Value: "ITEM"},
			"event": &types.AttributeValueMemberS{Value: string(m.Body)}, "write": &types.AttributeValueMemberN{Value: strconv.Itoa(h.writes)}}}); err != nil {
			t.Fatal(err)
		}
	}
	recs := testkit.StreamRecords(t, testkit.Streams(t), h.arn)[h.read:]
	h.read += len(recs)
	return recs
}

func (*dynamoHarness) Port(t *testing.T, e port.Engine, dl batch.DeadLetterer, opts batchtest.Options) batchtest.Handler[events.DynamoDBEventRecord] {
	t.Helper()
	p, err := dynamodbbatch.New(e, dynamodbbatch.Config{Options: batch.Options{DeadLetter: dl, NoPacking: opts.NoPacking},
		Decoder: dynamodbbatch.DecoderFunc(eventAttribute)})
	if err != nil {
		t.Fatal(err)
	}
	return func(ctx context.Context, recs []events.DynamoDBEventRecord) []string {
		return handle(t, p, recs)
	}
}

func (*dynamoHarness) Again(r events.DynamoDBEventRecord) events.DynamoDBEventRecord { return r }
func (*dynamoHarness) ID(r events.DynamoDBEventRecord) string                        { return r.Change.SequenceNumber }
func (*dynamoHarness) Letter(r events.DynamoDBEventRecord) events.SQSMessage {
	return dynamodbbatch.Message(r)
}
func (*dynamoHarness) Source() batchtest.Source { return batchtest.Source{Checkpoints: true} }

func TestProcessor_conforms_to_the_port_suite(t *testing.T) {
	t.Parallel()
	batchtest.Run(t, func(t *testing.T) batchtest.Harness[events.DynamoDBEventRecord] {
		h := &dynamoHarness{db: testkit.DynamoDB(t)}
		h.source, h.arn = testkit.StreamTable(t, h.db, "app")
		return h
	})
}
