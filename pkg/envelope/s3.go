package envelope

import (
	"context"
	"encoding/json"
	"net/url"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/onceflow/onceflow/pkg/cloudevent"
)

// S3 decodes an S3 event notification delivered to the queue (S3 sends one record per
// message). The key names the object version the event is about: event name, bucket, object
// key and the object's versionId and sequencer (a sequencer orders the events of one key, so an
// unversioned bucket's second PUT of a key is a new event), which S3 repeats unchanged when it
// delivers a notification twice. The type is the event name ("ObjectCreated:Put"), the source
// "aws:s3", the subject "bucket/key" (the key URL-decoded), the data the record (in canonical JSON).
// S3's "s3:TestEvent", sent when a notification is configured, decodes to an event of type
// "s3:TestEvent" keyed by its request id.
type S3 struct{}

// Decode returns the event of the notification's record.
func (S3) Decode(_ context.Context, msg events.SQSMessage) (cloudevent.Event, error) {
	var n struct {
		Records []json.RawMessage `json:"Records"`
		// s3:TestEvent
		Event, Bucket, RequestID string
		Time                     time.Time
	}
	if err := json.Unmarshal([]byte(msg.Body), &n); err != nil {
		return cloudevent.Event{}, cloudevent.Malformed("body", "not an S3 event notification: %v", err)
	}
	if err := wellFormed("", []byte(msg.Body)); err != nil {
		return cloudevent.Event{}, err
	}
	if n.Event == "s3:TestEvent" && len(n.Records) == 0 {
		return cloudevent.Event{SpecVersion: cloudevent.SpecVersion, ID: key("s3:TestEvent", n.RequestID), Source: "aws:s3",
			Type: n.Event, Subject: n.Bucket, Time: n.Time, DataContentType: "application/json", Data: json.RawMessage(msg.Body)}, nil
	}
	if len(n.Records) != 1 {
		return cloudevent.Event{}, cloudevent.Malformed("Records", "has %d records; want the one S3 sends", len(n.Records))
	}
	var r events.S3EventRecord
	if err := json.Unmarshal(n.Records[0], &r); err != nil {
		return cloudevent.Event{}, cloudevent.Malformed("Records.0", "not an S3 event record: %v", err)
	}
	obj := r.S3.Object
	switch {
	case r.EventName == "":
		return cloudevent.Event{}, cloudevent.Malformed("Records.0.eventName", "missing")
	case r.S3.Bucket.Name == "" || obj.Key == "":
		return cloudevent.Event{}, cloudevent.Malformed("Records.0.s3", "bucket name or object key missing")
	case obj.VersionID == "" && obj.Sequencer == "":
		return cloudevent.Event{}, cloudevent.Malformed("Records.0.s3.object", "has neither versionId nor sequencer")
	}
	name, err := url.QueryUnescape(obj.Key)
	if err != nil {
		return cloudevent.Event{}, cloudevent.Malformed("Records.0.s3.object.key", "not URL-encoded: %v", err)
	}
	v, err := parse("Records.0", n.Records[0])
	if err != nil {
		return cloudevent.Event{}, err
	}
	data, err := canonical(v)
	if err != nil {
		return cloudevent.Event{}, err
	}
	return cloudevent.Event{SpecVersion: cloudevent.SpecVersion, Source: "aws:s3", Type: r.EventName,
		ID:      key(r.EventName, r.S3.Bucket.Name, name, obj.VersionID, obj.Sequencer),
		Subject: r.S3.Bucket.Name + "/" + name, Time: r.EventTime, DataContentType: "application/json",
		Data: data}, nil
}
