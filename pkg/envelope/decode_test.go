package envelope_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/onceflow/onceflow/pkg/cloudevent"
	"github.com/onceflow/onceflow/pkg/envelope"
	"github.com/onceflow/onceflow/pkg/sqsbatch"
)

func sample(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// edit decodes a JSON body, lets change alter it, and encodes it again.
func edit(t *testing.T, body string, change func(m map[string]any)) string {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(body), &m); err != nil {
		t.Fatal(err)
	}
	change(m)
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func sameJSON(t *testing.T, a []byte, b string) bool {
	t.Helper()
	var x, y any
	if err := json.Unmarshal(a, &x); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(b), &y); err != nil {
		t.Fatal(err)
	}
	xb, _ := json.Marshal(x)
	yb, _ := json.Marshal(y)
	return string(xb) == string(yb)
}

func msg(body string) events.SQSMessage {
	return events.SQSMessage{MessageId: "m1", Body: body, Attributes: map[string]string{"MessageGroupId": "g1"}}
}

func decode(t *testing.T, d sqsbatch.Decoder, body string) cloudevent.Event {
	t.Helper()
	ev, err := d.Decode(context.Background(), msg(body))
	if err != nil {
		t.Fatalf("Decode: %v", err)
	}
	return ev
}

func TestEventBridge_decodes_the_detail_keyed_by_a_detail_field(t *testing.T) {
	body := sample(t, "codepipeline-execution-state-change-event.json")
	d := envelope.EventBridge{Key: []string{"pipeline", "execution-id"}}
	ev := decode(t, d, body)
	want := cloudevent.Event{ID: "myPipeline/01234567-0123-0123-0123-012345678901", Type: "CodePipeline Pipeline Execution State Change",
		Source: "aws.codepipeline", Subject: "g1", Time: time.Date(2017, 4, 22, 3, 31, 47, 0, time.UTC)}
	if ev.ID != want.ID || ev.Type != want.Type || ev.Source != want.Source || ev.Subject != want.Subject || !ev.Time.Equal(want.Time) {
		t.Errorf("event = %+v; want %+v", ev, want)
	}
	var detail struct{ State string }
	if err := json.Unmarshal(ev.Data, &detail); err != nil || detail.State != "STARTED" {
		t.Errorf("data = %s (%v); want the detail", ev.Data, err)
	}

	// A publisher's retried PutEvents: a new id and time, the same detail. Same key, same hash.
	retried := decode(t, d, edit(t, body, func(m map[string]any) {
		m["id"], m["time"] = "another-id", "2017-04-22T03:32:00Z"
	}))
	if retried.ID != ev.ID || retried.PayloadHash() != ev.PayloadHash() {
		t.Errorf("retried PutEvents decoded to %s (hash %s); want %s (hash %s): a duplicate", retried.ID, retried.PayloadHash(), ev.ID, ev.PayloadHash())
	}
	// The same key with another detail: a conflict for the consumer.
	other := decode(t, d, edit(t, body, func(m map[string]any) { m["detail"].(map[string]any)["state"] = "FAILED" }))
	if other.ID != ev.ID || other.PayloadHash() == ev.PayloadHash() {
		t.Errorf("other detail decoded to %s (hash %s); want key %s with another hash", other.ID, other.PayloadHash(), ev.ID)
	}
	// A group from the detail instead of the message's.
	if ev := decode(t, envelope.EventBridge{Key: []string{"execution-id"}, GroupField: "pipeline"}, body); ev.Subject != "myPipeline" {
		t.Errorf("subject = %q; want the detail's pipeline", ev.Subject)
	}
}

func TestSNS_decodes_the_message_with_raw_delivery_on_or_off_alike(t *testing.T) {
	envelopeBody := sample(t, "sns-sqs-notification.json")
	var env struct{ Message string }
	if err := json.Unmarshal([]byte(envelopeBody), &env); err != nil {
		t.Fatal(err)
	}
	d := envelope.SNS{Key: []string{"kind", "orderId"}, TypeField: "kind", GroupField: "customerId", Source: "shop"}
	wrapped, raw := decode(t, d, envelopeBody), decode(t, d, env.Message)
	if wrapped.ID != "order.placed/o-1001" || wrapped.Type != "order.placed" || wrapped.Subject != "c-7" || wrapped.Source != "shop" {
		t.Errorf("event = %+v; want key order.placed/o-1001, type order.placed, subject c-7", wrapped)
	}
	if !sameJSON(t, wrapped.Data, env.Message) {
		t.Errorf("data = %s; want the published message %s", wrapped.Data, env.Message)
	}
	if raw.ID != wrapped.ID || raw.PayloadHash() != wrapped.PayloadHash() {
		t.Errorf("raw delivery decoded to %s (hash %s); want what the envelope gave: %s (hash %s)", raw.ID, raw.PayloadHash(), wrapped.ID, wrapped.PayloadHash())
	}
	// A publisher's retried Publish: a new MessageId and Timestamp, the same message.
	retried := decode(t, d, edit(t, envelopeBody, func(m map[string]any) {
		m["MessageId"], m["Timestamp"] = "11111111-2222-3333-4444-555555555555", "2015-06-03T17:44:00.000Z"
	}))
	if retried.ID != wrapped.ID || retried.PayloadHash() != wrapped.PayloadHash() {
		t.Errorf("retried Publish decoded to %s; want a duplicate of %s", retried.ID, wrapped.ID)
	}
	// A fixed type when the message has no type field.
	if ev := decode(t, envelope.SNS{Key: []string{"orderId"}, Type: "order.placed"}, envelopeBody); ev.Type != "order.placed" || ev.Subject != "g1" {
		t.Errorf("event = %+v; want the fixed type and the message's group", ev)
	}
}

func TestS3_keys_each_object_version_or_sequencer(t *testing.T) {
	body := sample(t, "s3-event.json")
	ev := decode(t, envelope.S3{}, body)
	if ev.Type != "ObjectCreated:Put" || ev.Source != "aws:s3" || ev.Subject != "sourcebucket/Happy Face.jpg" ||
		ev.ID != "ObjectCreated:Put/sourcebucket/Happy%20Face.jpg/version/Happy%20Sequencer" {
		t.Errorf("event = %+v", ev)
	}
	if !ev.Time.Equal(time.Date(1970, 1, 1, 0, 0, 0, 123e6, time.UTC)) {
		t.Errorf("time = %s; want the record's eventTime", ev.Time)
	}
	setObject := func(k, v string) func(m map[string]any) {
		return func(m map[string]any) {
			m["Records"].([]any)[0].(map[string]any)["s3"].(map[string]any)["object"].(map[string]any)[k] = v
		}
	}
	// S3 delivering the same notification again is the same event.
	if again := decode(t, envelope.S3{}, body); again.ID != ev.ID || again.PayloadHash() != ev.PayloadHash() {
		t.Errorf("the same notification decoded to %s; want %s", again.ID, ev.ID)
	}
	// A later PUT of the key in an unversioned bucket: no versionId, a new sequencer.
	unversioned := edit(t, body, setObject("versionId", ""))
	first := decode(t, envelope.S3{}, unversioned)
	second := decode(t, envelope.S3{}, edit(t, unversioned, setObject("sequencer", "0055AED6DCD90281E6")))
	if first.ID == second.ID {
		t.Errorf("two PUTs of one key both decoded to %s; want one key per sequencer", first.ID)
	}
	// A new version of the object is a new event.
	if v2 := decode(t, envelope.S3{}, edit(t, body, setObject("versionId", "v2"))); v2.ID == ev.ID {
		t.Errorf("a new version decoded to the same key %s", v2.ID)
	}
	// A long key is hashed to fit the idempotency key, stably.
	long := edit(t, body, setObject("key", strings.Repeat("k", 300)))
	if a, b := decode(t, envelope.S3{}, long), decode(t, envelope.S3{}, long); a.ID != b.ID || !strings.HasPrefix(a.ID, "sha256:") || len(a.ID) > cloudevent.MaxIDLength {
		t.Errorf("long key decoded to %q and %q; want one sha256: key of at most %d characters", a.ID, b.ID, cloudevent.MaxIDLength)
	}
	lifecycle := decode(t, envelope.S3{}, sample(t, "s3-lifecycle-event.json"))
	if lifecycle.Type != "s3:LifecycleTransition" || lifecycle.Subject != "example-bucket/lifecycle-test.dat" {
		t.Errorf("lifecycle event = %+v", lifecycle)
	}
	test := decode(t, envelope.S3{}, `{"Service":"Amazon S3","Event":"s3:TestEvent","Time":"2014-10-13T15:57:02.089Z","Bucket":"b","RequestId":"5582815E1AEA5ADF","HostId":"h"}`)
	if test.Type != "s3:TestEvent" || test.ID != "s3:TestEvent/5582815E1AEA5ADF" {
		t.Errorf("test event = %+v", test)
	}
}

func TestJSON_takes_key_type_and_group_from_named_fields(t *testing.T) {
	body := `{"order": {"id": 1001, "customer": "c-7"}, "kind": "order.placed", "at": "2026-01-02T03:04:05Z", "total": 30}`
	d := envelope.JSON{Key: []string{"kind", "order.id"}, TypeField: "kind", GroupField: "order.customer", TimeField: "at", Source: "shop"}
	ev := decode(t, d, body)
	if ev.ID != "order.placed/1001" || ev.Type != "order.placed" || ev.Subject != "c-7" || ev.Source != "shop" ||
		!ev.Time.Equal(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)) || !sameJSON(t, ev.Data, body) {
		t.Errorf("event = %+v", ev)
	}
	// Whitespace and field order are not a change of payload; a field is.
	reordered := `{"total":30,"at":"2026-01-02T03:04:05Z","kind":"order.placed","order":{"customer":"c-7","id":1001}}`
	if same := decode(t, d, reordered); same.PayloadHash() != ev.PayloadHash() {
		t.Error("the same document with its fields in another order hashed differently")
	}
	if other := decode(t, d, strings.Replace(body, "30", "31", 1)); other.ID != ev.ID || other.PayloadHash() == ev.PayloadHash() {
		t.Error("the same key with another total hashed the same: a conflict would pass as a duplicate")
	}
	// Parts are escaped, so that two keys never meet by their separator.
	a := decode(t, envelope.JSON{Key: []string{"a", "b"}, Type: "t"}, `{"a":"x/y","b":"z"}`)
	b := decode(t, envelope.JSON{Key: []string{"a", "b"}, Type: "t"}, `{"a":"x","b":"y/z"}`)
	if a.ID == b.ID {
		t.Errorf("keys (x/y, z) and (x, y/z) both decoded to %s", a.ID)
	}
}

func TestDecoders_refuse_what_they_cannot_key_as_malformed(t *testing.T) {
	for _, tc := range []struct {
		name, body, field string
		d                 sqsbatch.Decoder
	}{
		{"json key missing", `{"kind":"t"}`, "body.orderId", envelope.JSON{Key: []string{"orderId"}, TypeField: "kind"}},
		{"json key an object", `{"orderId":{},"kind":"t"}`, "body.orderId", envelope.JSON{Key: []string{"orderId"}, TypeField: "kind"}},
		{"json key empty", `{"orderId":"","kind":"t"}`, "body.orderId", envelope.JSON{Key: []string{"orderId"}, TypeField: "kind"}},
		{"json not json", `orderId=1`, "body", envelope.JSON{Key: []string{"orderId"}, Type: "t"}},
		{"json bad time", `{"orderId":"1","at":"yesterday"}`, "body.at", envelope.JSON{Key: []string{"orderId"}, Type: "t", TimeField: "at"}},
		{"eventbridge no detail-type", `{"source":"s","detail":{"k":"1"}}`, "detail-type", envelope.EventBridge{Key: []string{"k"}}},
		{"eventbridge key missing", `{"detail-type":"t","source":"s","detail":{}}`, "detail.k", envelope.EventBridge{Key: []string{"k"}}},
		{"sns message not json", `{"Type":"Notification","TopicArn":"arn","MessageId":"1","Message":"Hello from SNS!"}`, "Message", envelope.SNS{Key: []string{"k"}, Type: "t"}},
		{"s3 two records", `{"Records":[{},{}]}`, "Records", envelope.S3{}},
		{"s3 no version nor sequencer", `{"Records":[{"eventName":"ObjectCreated:Put","s3":{"bucket":{"name":"b"},"object":{"key":"k"}}}]}`, "Records.0.s3.object", envelope.S3{}},
		{"cloudevents", `{"id":"1"}`, "specversion", envelope.CloudEvents{}},
	} {
		t.Run(tc.name, func(t *testing.T) { refusesAsMalformed(t, tc.d, tc.body, tc.field) })
	}
}

// Every decoder refuses a body that is not I-JSON, naming the field: bytes that are not UTF-8
// would be decoded as U+FFFD (two keys that differ only there one key), a member twice as one
// of its two values.
func TestDecoders_refuse_a_body_that_is_not_I_JSON(t *testing.T) {
	byOrder := envelope.JSON{Key: []string{"orderId"}, Type: "t"}
	for _, tc := range []struct {
		name, body, field string
		d                 sqsbatch.Decoder
	}{
		{"json key not UTF-8", "{\"orderId\":\"o\xff\"}", "body.orderId", byOrder},
		{"json key twice", `{"orderId":"1","orderId":"2"}`, "body.orderId", byOrder},
		{"json lone surrogate", `{"orderId":"1","note":"\udc00"}`, "body.note", byOrder},
		{"eventbridge detail key twice", `{"detail-type":"t","source":"s","detail":{"k":"1","k":"2"}}`, "detail.k", envelope.EventBridge{Key: []string{"k"}}},
		{"eventbridge detail twice", `{"detail-type":"t","source":"s","detail":{"k":"1"},"detail":{"k":"2"}}`, "detail", envelope.EventBridge{Key: []string{"k"}}},
		{"sns message twice", `{"Type":"Notification","TopicArn":"arn","MessageId":"1","Message":"{\"k\":\"1\"}","Message":"{\"k\":\"2\"}"}`, "Message", envelope.SNS{Key: []string{"k"}, Type: "t"}},
		{"sns message key twice", `{"Type":"Notification","TopicArn":"arn","MessageId":"1","Message":"{\"k\":\"1\",\"k\":\"2\"}"}`, "Message.k", envelope.SNS{Key: []string{"k"}, Type: "t"}},
		{"sns raw not UTF-8", "{\"k\":\"\xfe\"}", "body.k", envelope.SNS{Key: []string{"k"}, Type: "t"}},
		{"s3 key not UTF-8", "{\"Records\":[{\"eventName\":\"ObjectCreated:Put\",\"s3\":{\"bucket\":{\"name\":\"b\"},\"object\":{\"key\":\"k\xff\",\"sequencer\":\"1\"}}}]}", "Records.0.s3.object.key", envelope.S3{}},
		{"cloudevents id twice", `{"specversion":"1.0","id":"1","id":"2","source":"s","type":"t"}`, "id", envelope.CloudEvents{}},
	} {
		t.Run(tc.name, func(t *testing.T) { refusesAsMalformed(t, tc.d, tc.body, tc.field) })
	}
}

// refusesAsMalformed checks that d refuses body with a MalformedError of field.
func refusesAsMalformed(t *testing.T, d sqsbatch.Decoder, body, field string) {
	t.Helper()
	_, err := d.Decode(context.Background(), msg(body))
	var me *cloudevent.MalformedError
	if !errors.As(err, &me) || me.Field != field {
		t.Fatalf("Decode = %v; want a MalformedError of field %s", err, field)
	}
}

// A decoder without a key is refused when the consumer is built, with why the key must come
// from the payload: EventBridge's id and SNS's MessageId change on every publish call.
func TestDecoders_without_a_key_are_refused_saying_why(t *testing.T) {
	for _, tc := range []struct {
		d    sqsbatch.Decoder
		want string
	}{
		{envelope.EventBridge{}, "EventBridge's event id is new on every publish call"},
		{envelope.SNS{Type: "t"}, "SNS's MessageId is new on every publish call"},
		{envelope.JSON{Type: "t"}, "JSON.Key is empty"},
		{envelope.JSON{Key: []string{"k"}}, "neither TypeField nor Type"},
	} {
		err := sqsbatch.Config{Decoder: tc.d}.Validate()
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Validate with %T = %v; want an error saying %q", tc.d, err, tc.want)
		}
	}
}

// A key taken from the payload is the value, not its writing: a Go producer's 10 and a Python
// producer's 10.0 (or 1e1) are one order, its re-publish one event with one hash.
func TestJSON_key_and_hash_are_one_for_every_writing_of_a_number(t *testing.T) {
	d := envelope.JSON{Key: []string{"orderId", "kind"}, Type: "order.placed"}
	goBody := `{"orderId":10,"kind":"placed","total":30}`
	for _, again := range []string{`{"orderId":10.0,"kind":"placed","total":30.0}`, `{"total":3e1,"kind":"placed","orderId":1E1}`} {
		a, b := decode(t, d, goBody), decode(t, d, again)
		if a.ID != "10/placed" || b.ID != a.ID || b.PayloadHash() != a.PayloadHash() {
			t.Errorf("%s decoded to key %q hash %.12s; want %q, hash %.12s", again, b.ID, b.PayloadHash(), a.ID, a.PayloadHash())
		}
	}
	// A number a double does not hold keeps its digits: two orders, never one.
	big1, big2 := decode(t, d, `{"orderId":9007199254740993,"kind":"placed"}`), decode(t, d, `{"orderId":9007199254740992,"kind":"placed"}`)
	if big1.ID == big2.ID {
		t.Errorf("orders 9007199254740993 and 9007199254740992 both keyed %q", big1.ID)
	}
}
