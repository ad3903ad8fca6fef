package testkit

import (
	"fmt"
	"sync"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// DynamoDBStream builds the records a Lambda function receives from one table's stream (view
// type NEW_AND_OLD_IMAGES), as its event source mapping delivers them: the item's keys, its
// images, an increasing sequence number and the stream's ARN. It is safe for concurrent use.
type DynamoDBStream struct {
	arn  string
	keys []string
	mu   sync.Mutex
	n    int64
}

// TableStream returns the stream of table, whose items are keyed by keys (the partition key,
// then the sort key if any).
func TableStream(table string, keys ...string) *DynamoDBStream {
	return &DynamoDBStream{arn: "arn:aws:dynamodb:us-east-1:000000000000:table/" + table + "/stream/2026-01-01T00:00:00.000", keys: keys}
}

// ARN is the stream's ARN, the records' EventSourceArn.
func (s *DynamoDBStream) ARN() string { return s.arn }

// Insert is the record of item (a struct with dynamodbav tags, or a map) written new.
func (s *DynamoDBStream) Insert(item any) events.DynamoDBEventRecord {
	return s.record(events.DynamoDBOperationTypeInsert, nil, item)
}

// Modify is the record of an item changed from old to item.
func (s *DynamoDBStream) Modify(old, item any) events.DynamoDBEventRecord {
	return s.record(events.DynamoDBOperationTypeModify, old, item)
}

// Remove is the record of item deleted.
func (s *DynamoDBStream) Remove(old any) events.DynamoDBEventRecord {
	return s.record(events.DynamoDBOperationTypeRemove, old, nil)
}

func (s *DynamoDBStream) record(op events.DynamoDBOperationType, old, item any) events.DynamoDBEventRecord {
	s.mu.Lock()
	s.n++
	n := s.n
	s.mu.Unlock()
	oldImage, newImage := image(old), image(item)
	from := newImage
	if from == nil {
		from = oldImage
	}
	keys := map[string]events.DynamoDBAttributeValue{}
	for _, k := range s.keys {
		v, ok := from[k]
		if !ok {
			panic(fmt.Sprintf("testkit: the item has no key attribute %q", k))
		}
		keys[k] = v
	}
	seq := fmt.Sprintf("1%020d", n)
	return events.DynamoDBEventRecord{
		AWSRegion: "us-east-1", EventID: fmt.Sprintf("%032x", n), EventName: string(op), EventSource: "aws:dynamodb",
		EventVersion: "1.1", EventSourceArn: s.arn,
		Change: events.DynamoDBStreamRecord{
			ApproximateCreationDateTime: events.SecondsEpochTime{Time: time.Now().Truncate(time.Second)},
			Keys:                        keys, NewImage: newImage, OldImage: oldImage, SequenceNumber: seq,
			SizeBytes: int64(100 + 10*len(keys)), StreamViewType: string(events.DynamoDBStreamViewTypeNewAndOldImages),
		},
	}
}

// DynamoDBBatch is the event Lambda passes the function: recs in the order given, which is the
// shard's order.
func DynamoDBBatch(recs ...events.DynamoDBEventRecord) events.DynamoDBEvent {
	return events.DynamoDBEvent{Records: append([]events.DynamoDBEventRecord(nil), recs...)}
}

// image is item as a stream image; nil for nil.
func image(item any) map[string]events.DynamoDBAttributeValue {
	if item == nil {
		return nil
	}
	av, err := attributevalue.MarshalMap(item)
	if err != nil {
		panic(fmt.Sprintf("testkit: encode the item: %v", err))
	}
	out := make(map[string]events.DynamoDBAttributeValue, len(av))
	for k, v := range av {
		out[k] = streamValue(v)
	}
	return out
}

// streamValue is v as aws-lambda-go's events package carries it in a stream record.
func streamValue(v types.AttributeValue) events.DynamoDBAttributeValue {
	switch v := v.(type) {
	case *types.AttributeValueMemberS:
		return events.NewStringAttribute(v.Value)
	case *types.AttributeValueMemberN:
		return events.NewNumberAttribute(v.Value)
	case *types.AttributeValueMemberB:
		return events.NewBinaryAttribute(v.Value)
	case *types.AttributeValueMemberBOOL:
		return events.NewBooleanAttribute(v.Value)
	case *types.AttributeValueMemberNULL:
		return events.NewNullAttribute()
	case *types.AttributeValueMemberSS:
		return events.NewStringSetAttribute(v.Value)
	case *types.AttributeValueMemberNS:
		return events.NewNumberSetAttribute(v.Value)
	case *types.AttributeValueMemberBS:
		return events.NewBinarySetAttribute(v.Value)
	case *types.AttributeValueMemberL:
		l := make([]events.DynamoDBAttributeValue, len(v.Value))
		for i, e := range v.Value {
			l[i] = streamValue(e)
		}
		return events.NewListAttribute(l)
	case *types.AttributeValueMemberM:
		m := make(map[string]events.DynamoDBAttributeValue, len(v.Value))
		for k, e := range v.Value {
			m[k] = streamValue(e)
		}
		return events.NewMapAttribute(m)
	}
	panic(fmt.Sprintf("testkit: attribute value %T", v))
}
