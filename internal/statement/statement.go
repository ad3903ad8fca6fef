package statement

import (
	"strconv"
	"strings"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/onceflow/onceflow/pkg/cloudevent"
	"github.com/onceflow/onceflow/pkg/dynamodbbatch"
	"github.com/onceflow/onceflow/pkg/idempotency"
)

// Consumer is the statement consumer's name (CONSUMER_NAME).
const Consumer = "statement"

// LinePrefix starts the sort key of every line, "LINE#<sequence number>".
const LinePrefix = "LINE#"

// Line is a statement line: an account's balance after one change of its item.
type Line struct {
	PK        string `dynamodbav:"pk" json:"-"`
	SK        string `dynamodbav:"sk" json:"-"`
	Kind      string `dynamodbav:"kind" json:"-"`
	AccountID string `dynamodbav:"accountId" json:"accountId"`
	EventID   string `dynamodbav:"eventId" json:"eventId"`
	Balance   int64  `dynamodbav:"balance" json:"balance"`
	Change    string `dynamodbav:"change" json:"change"`
}

// PK is the partition key of account id's statement: its lines and its head.
func PK(id string) string { return "STATEMENT#" + id }

// HeadKey is the key of account id's statement head: the sort key of its last line (last) and
// the balance after it.
func HeadKey(id string) map[string]types.AttributeValue {
	return map[string]types.AttributeValue{
		"pk": &types.AttributeValueMemberS{Value: PK(id)},
		"sk": &types.AttributeValueMemberS{Value: "HEAD"},
	}
}

// ReasonOutOfOrder is the rejection of a change that comes after a later change of its account
// was written: never, while the port applies an item's changes in order (a test of it, not a
// business rule; the verification of make chaos counts these rejections).
const ReasonOutOfOrder = "out of order: a later change of the account was written first"

// Handler returns the statement consumer's handler: an insert or a modify of an account item
// (the event source mapping filters the stream to those) writes its line in table.
func Handler(table string) *idempotency.Router {
	r := idempotency.NewRouter()
	write := func(ev cloudevent.Event, ch events.DynamoDBStreamRecord) (idempotency.Effect, error) {
		line, err := LineOf(ev, ch)
		if err != nil {
			return nil, err
		}
		return Effect(table, line), nil
	}
	idempotency.Route(r, dynamodbbatch.Insert, write)
	idempotency.Route(r, dynamodbbatch.Modify, write)
	return r
}

// Effect is the effect of line in table: the line, written only if new (else the change was
// written before: a duplicate), and its account's head moved to it, on condition that the line
// comes after the head's last (else ReasonOutOfOrder).
func Effect(table string, line Line) idempotency.Effect {
	isNew := expression.Name("pk").AttributeNotExists()
	last := expression.Name("last")
	later := last.AttributeNotExists().Or(last.LessThan(expression.Value(line.SK)))
	head := idempotency.Update(table, HeadKey(line.AccountID), expression.
		Set(last, expression.Value(line.SK)).
		Set(expression.Name("kind"), expression.Value("statement-head")).
		Set(expression.Name("balance"), expression.Value(line.Balance))).
		If(later).OrReject(ReasonOutOfOrder)
	return idempotency.Effect{idempotency.Put(table, line).If(isNew).OrDuplicate(), head}
}

// LineOf is the line of a change of an account item (ev, the change as
// dynamodbbatch.ChangeEvent makes it, and its data ch). An account item without an id, a
// whole balance or the lastEvent the ledger sets, or a change without a sequence number, is
// malformed.
func LineOf(ev cloudevent.Event, ch events.DynamoDBStreamRecord) (Line, error) {
	img := ch.NewImage
	if kind := str(img, "kind"); kind != "account" {
		return Line{}, cloudevent.Malformed("dynamodb.NewImage.kind", "%q is not an account item", kind)
	}
	id := str(img, "id")
	if id == "" {
		return Line{}, cloudevent.Malformed("dynamodb.NewImage.id", "the account item has no id")
	}
	bal, ok := img["balance"]
	if !ok || bal.DataType() != events.DataTypeNumber {
		return Line{}, cloudevent.Malformed("dynamodb.NewImage.balance", "account %s has no number balance", id)
	}
	balance, err := strconv.ParseInt(bal.Number(), 10, 64)
	if err != nil {
		return Line{}, cloudevent.Malformed("dynamodb.NewImage.balance", "account %s: %q is not a whole number", id, bal.Number())
	}
	movement := str(img, "lastEvent")
	if movement == "" {
		return Line{}, cloudevent.Malformed("dynamodb.NewImage.lastEvent",
			"the change of account %s names no movement: the item was written by something other than the ledger", id)
	}
	seq := ch.SequenceNumber
	if seq == "" || strings.Trim(seq, "0123456789") != "" || len(seq) > 40 {
		return Line{}, cloudevent.Malformed("dynamodb.SequenceNumber", "%q is not a sequence number", seq)
	}
	return Line{PK: PK(id), SK: LinePrefix + strings.Repeat("0", 40-len(seq)) + seq, Kind: "statement", AccountID: id,
		EventID: movement, Balance: balance, Change: ev.ID}, nil
}

// str is attribute name of img if it is a string, else "".
func str(img map[string]events.DynamoDBAttributeValue, name string) string {
	v, ok := img[name]
	if !ok || v.DataType() != events.DataTypeString {
		return ""
	}
	return v.String()
}
