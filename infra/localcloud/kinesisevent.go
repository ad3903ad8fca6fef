package localcloud

import (
	"encoding/json"
	"fmt"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	kintypes "github.com/aws/aws-sdk-go-v2/service/kinesis/types"
)

// KinesisEvent builds the event Lambda's Kinesis event source mapping sends for records read
// from shard shardID of the stream streamARN, on behalf of function.
func KinesisEvent(recs []kintypes.Record, shardID, streamARN, function string) events.KinesisEvent {
	ev := events.KinesisEvent{Records: make([]events.KinesisEventRecord, 0, len(recs))}
	for _, r := range recs {
		out := events.KinesisEventRecord{
			AwsRegion:         Region,
			EventID:           shardID + ":" + aws.ToString(r.SequenceNumber),
			EventName:         "aws:kinesis:record",
			EventSource:       "aws:kinesis",
			EventSourceArn:    streamARN,
			EventVersion:      "1.0",
			InvokeIdentityArn: fmt.Sprintf("arn:aws:iam::%s:role/%s-role", Account, function),
			Kinesis: events.KinesisRecord{
				Data:                 r.Data,
				EncryptionType:       string(r.EncryptionType),
				PartitionKey:         aws.ToString(r.PartitionKey),
				SequenceNumber:       aws.ToString(r.SequenceNumber),
				KinesisSchemaVersion: "1.0",
			},
		}
		if out.Kinesis.EncryptionType == string(kintypes.EncryptionTypeNone) {
			out.Kinesis.EncryptionType = ""
		}
		if t := r.ApproximateArrivalTimestamp; t != nil {
			out.Kinesis.ApproximateArrivalTimestamp = events.SecondsEpochTime{Time: *t}
		}
		ev.Records = append(ev.Records, out)
	}
	return ev
}

// kinesisFilterView is what a Kinesis mapping's FilterCriteria see: the record's kinesis
// metadata with its data decoded and parsed when it is JSON (Lambda filters on "data" and the
// metadata fields, e.g. {"partitionKey":["k1"]} or {"data":{"type":["click"]}}).
func kinesisFilterView(r events.KinesisEventRecord) any {
	view := map[string]any{
		"kinesisSchemaVersion":        r.Kinesis.KinesisSchemaVersion,
		"partitionKey":                r.Kinesis.PartitionKey,
		"sequenceNumber":              r.Kinesis.SequenceNumber,
		"approximateArrivalTimestamp": r.Kinesis.ApproximateArrivalTimestamp,
	}
	var parsed any
	if json.Unmarshal(r.Kinesis.Data, &parsed) == nil {
		view["data"] = parsed
	}
	return view
}

// encode builds the Kinesis event of the records FilterCriteria passes.
func (p *kinesisPoller) encode(recs []streamRecord) ([]byte, []string, error) {
	if len(recs) == 0 {
		return nil, nil, nil
	}
	raw := make([]kintypes.Record, len(recs))
	for i, r := range recs {
		raw[i] = r.record.(kinesisRecord).Record
	}
	all := KinesisEvent(raw, recs[0].record.(kinesisRecord).shard, p.event.SourceARN, p.function)
	var ev events.KinesisEvent
	for _, r := range all.Records {
		if p.event.Filter.match(kinesisFilterView(r)) {
			ev.Records = append(ev.Records, r)
		}
	}
	if n := len(all.Records) - len(ev.Records); n > 0 {
		p.count(func(s *MappingStats) { s.Filtered += n })
	}
	if len(ev.Records) == 0 {
		return nil, nil, nil
	}
	seqs := make([]string, len(ev.Records))
	for i, r := range ev.Records {
		seqs[i] = r.Kinesis.SequenceNumber
	}
	payload, err := json.Marshal(ev)
	return payload, seqs, err
}

// batchInfo is the KinesisBatchInfo of a Kinesis stream's failure record.
func (p *kinesisPoller) batchInfo(shardID string, dropped []streamRecord) (string, map[string]any) {
	first, last := dropped[0], dropped[len(dropped)-1]
	return "KinesisBatchInfo", map[string]any{
		"shardId":                         shardID,
		"startSequenceNumber":             first.seq,
		"endSequenceNumber":               last.seq,
		"approximateArrivalOfFirstRecord": arrivalText(first),
		"approximateArrivalOfLastRecord":  arrivalText(last),
		"batchSize":                       len(dropped),
		"streamArn":                       p.event.SourceARN,
	}
}
