package dynamodbbatch

import (
	"fmt"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/arn"
	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams/types"
)

// EventOf is the event Lambda's DynamoDB event source mapping sends for recs, read from the
// stream streamARN: for a Processor driven by a GetRecords loop of your own (a container, a
// test) rather than by Lambda. It fails on an attribute value of a type it does not know.
func EventOf(recs []types.Record, streamARN string) (events.DynamoDBEvent, error) {
	ev := events.DynamoDBEvent{Records: make([]events.DynamoDBEventRecord, 0, len(recs))}
	source, _ := arn.Parse(streamARN) // its region is the records'
	for _, r := range recs {
		out := events.DynamoDBEventRecord{
			AWSRegion:      source.Region,
			EventID:        aws.ToString(r.EventID),
			EventName:      string(r.EventName),
			EventSource:    "aws:dynamodb",
			EventVersion:   aws.ToString(r.EventVersion),
			EventSourceArn: streamARN,
		}
		if out.EventVersion == "" {
			out.EventVersion = "1.1"
		}
		if id := r.UserIdentity; id != nil {
			out.UserIdentity = &events.DynamoDBUserIdentity{Type: aws.ToString(id.Type), PrincipalID: aws.ToString(id.PrincipalId)}
		}
		if d := r.Dynamodb; d != nil {
			var err error
			ch := &out.Change
			ch.SequenceNumber = aws.ToString(d.SequenceNumber)
			ch.SizeBytes = aws.ToInt64(d.SizeBytes)
			ch.StreamViewType = string(d.StreamViewType)
			if d.ApproximateCreationDateTime != nil {
				ch.ApproximateCreationDateTime = events.SecondsEpochTime{Time: *d.ApproximateCreationDateTime}
			}
			if ch.Keys, err = imageOf(d.Keys); err != nil {
				return ev, err
			}
			if ch.NewImage, err = imageOf(d.NewImage); err != nil {
				return ev, err
			}
			if ch.OldImage, err = imageOf(d.OldImage); err != nil {
				return ev, err
			}
		}
		ev.Records = append(ev.Records, out)
	}
	return ev, nil
}

func imageOf(m map[string]types.AttributeValue) (map[string]events.DynamoDBAttributeValue, error) {
	if m == nil {
		return nil, nil
	}
	out := make(map[string]events.DynamoDBAttributeValue, len(m))
	for k, v := range m {
		a, err := attributeOf(v)
		if err != nil {
			return nil, fmt.Errorf("attribute %s: %w", k, err)
		}
		out[k] = a
	}
	return out, nil
}

func attributeOf(v types.AttributeValue) (events.DynamoDBAttributeValue, error) {
	switch x := v.(type) {
	case *types.AttributeValueMemberS:
		return events.NewStringAttribute(x.Value), nil
	case *types.AttributeValueMemberN:
		return events.NewNumberAttribute(x.Value), nil
	case *types.AttributeValueMemberB:
		return events.NewBinaryAttribute(x.Value), nil
	case *types.AttributeValueMemberBOOL:
		return events.NewBooleanAttribute(x.Value), nil
	case *types.AttributeValueMemberNULL:
		return events.NewNullAttribute(), nil
	case *types.AttributeValueMemberSS:
		return events.NewStringSetAttribute(x.Value), nil
	case *types.AttributeValueMemberNS:
		return events.NewNumberSetAttribute(x.Value), nil
	case *types.AttributeValueMemberBS:
		return events.NewBinarySetAttribute(x.Value), nil
	case *types.AttributeValueMemberL:
		list := make([]events.DynamoDBAttributeValue, 0, len(x.Value))
		for _, e := range x.Value {
			a, err := attributeOf(e)
			if err != nil {
				return a, err
			}
			list = append(list, a)
		}
		return events.NewListAttribute(list), nil
	case *types.AttributeValueMemberM:
		m, err := imageOf(x.Value)
		if err != nil {
			return events.DynamoDBAttributeValue{}, err
		}
		return events.NewMapAttribute(m), nil
	}
	return events.DynamoDBAttributeValue{}, fmt.Errorf("unknown attribute value %T", v)
}
