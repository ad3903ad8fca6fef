package kinesisbatch_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"

	"github.com/onceflow/onceflow/internal/apptest"
	"github.com/onceflow/onceflow/internal/testenv"
	"github.com/onceflow/onceflow/pkg/batch"
	"github.com/onceflow/onceflow/pkg/cloudevent"
	"github.com/onceflow/onceflow/pkg/deadletter"
	"github.com/onceflow/onceflow/pkg/idempotency"
	"github.com/onceflow/onceflow/pkg/kinesisbatch"
)

func handle(t *testing.T, p *kinesisbatch.Processor, recs []events.KinesisEventRecord) []string {
	t.Helper()
	resp, err := p.Handle(context.Background(), events.KinesisEvent{Records: recs})
	if err != nil {
		t.Fatal(err)
	}
	var seqs []string
	for _, f := range resp.BatchItemFailures {
		seqs = append(seqs, f.ItemIdentifier)
	}
	return seqs
}

// A record failing in the middle of a batch of kinesalite's records: the response reports its
// sequence number, the later records of its partition key are not applied, the other key's
// are; Lambda's redelivery from that record applies the rest, and nothing twice.
func TestProcessor_failure_mid_batch_reports_its_sequence_number_and_redelivery_applies_once(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		cfg  kinesisbatch.Config
	}{{"packed", kinesisbatch.Config{}}, {"unpacked", kinesisbatch.Config{NoPacking: true}}} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newStreamEnv(t)
			for n := 1; n <= 3; n++ {
				e.write(t, "a", n)
				e.write(t, "b", n)
			}
			recs := e.records(t)
			if len(recs) != 6 {
				t.Fatalf("stream has %d records; want 6", len(recs))
			}
			e.failOnce("a", 2, errors.New("downstream timed out"))
			p, err := kinesisbatch.New(e.consumer(t, idempotency.GoOn), tc.cfg)
			if err != nil {
				t.Fatal(err)
			}

			failed := handle(t, p, recs)
			a2 := recs[2].Kinesis.SequenceNumber // a1 b1 a2 b2 a3 b3
			if !slices.Equal(failed, []string{a2}) {
				t.Fatalf("BatchItemFailures = %v; want a2's sequence number %s only", failed, a2)
			}
			if got := e.applied(t, "a"); !slices.Equal(got, []int{1}) {
				t.Errorf("key a applied %v after the failure; want [1] (a3 waits behind a2)", got)
			}
			if got := e.applied(t, "b"); !slices.Equal(got, []int{1, 2, 3}) {
				t.Errorf("key b applied %v; want [1 2 3]", got)
			}

			if failed := handle(t, p, from(recs, a2)); len(failed) > 0 {
				t.Fatalf("redelivery BatchItemFailures = %v; want none", failed)
			}
			for _, item := range []string{"a", "b"} {
				if got := e.applied(t, item); !slices.Equal(got, []int{1, 2, 3}) {
					t.Errorf("key %s applied %v after the redelivery; want [1 2 3], each once, in order", item, got)
				}
			}
		})
	}
}

// A record that can never succeed goes to the SQS dead-letter queue with its reason; under
// HoldGroup its key's later records follow it there, held, while the other key's apply.
func TestProcessor_poison_record_is_dead_lettered_and_holds_its_key(t *testing.T) {
	t.Parallel()
	e := newStreamEnv(t)
	sq := testenv.SQS(t)
	dlq := apptest.FIFOQueue(t, sq, "kinesis-dlq")
	e.write(t, "a", 1)
	e.write(t, "b", 1)
	e.write(t, "a", -1)
	e.write(t, "b", 2)
	e.write(t, "a", 3)
	p, err := kinesisbatch.New(e.consumer(t, idempotency.HoldGroup), kinesisbatch.Config{DeadLetter: deadletter.New(sq, dlq)})
	if err != nil {
		t.Fatal(err)
	}
	recs := e.records(t)
	if failed := handle(t, p, recs); len(failed) > 0 {
		t.Fatalf("BatchItemFailures = %v; want none: the poison record and the one held behind it are dead-lettered", failed)
	}
	if got := e.applied(t, "a"); !slices.Equal(got, []int{1}) {
		t.Errorf("key a applied %v; want [1]: a3 held behind the poison record", got)
	}
	if got := e.applied(t, "b"); !slices.Equal(got, []int{1, 2}) {
		t.Errorf("key b applied %v; want [1 2]", got)
	}
	letters := apptest.Drain(t, sq, dlq)
	if len(letters) != 2 {
		t.Fatalf("dead letters = %d; want 2 (the poison record, then the one held behind it)", len(letters))
	}
	first := aws.ToString(letters[0].MessageAttributes[deadletter.AttrReason].StringValue)
	second := aws.ToString(letters[1].MessageAttributes[deadletter.AttrReason].StringValue)
	if !strings.Contains(first, "negative amount") || !strings.Contains(second, "held behind") {
		t.Errorf("reasons = %q, %q; want the poison record's own, then held behind it", first, second)
	}
}

// With the CloudEvents decoder the key comes from the payload: a producer that put the same
// event twice (a PutRecord retried after a timeout: two records) has it applied once.
func TestProcessor_key_from_the_payload_applies_a_record_put_twice_once(t *testing.T) {
	t.Parallel()
	e := newStreamEnv(t)
	ev := cloudevent.Event{SpecVersion: "1.0", ID: "amount-a-1", Source: "test", Type: "amount.added",
		Data: []byte(`{"item":"a","n":1}`)}
	body, err := cloudevent.Encode(ev)
	if err != nil {
		t.Fatal(err)
	}
	e.put(t, "a", body)
	e.put(t, "a", body)
	p, err := kinesisbatch.New(e.consumer(t, idempotency.GoOn), kinesisbatch.Config{Decoder: kinesisbatch.DecoderFunc(kinesisbatch.CloudEvents)})
	if err != nil {
		t.Fatal(err)
	}
	if failed := handle(t, p, e.records(t)); len(failed) > 0 {
		t.Fatalf("BatchItemFailures = %v; want none", failed)
	}
	if got := e.applied(t, "a"); !slices.Equal(got, []int{1}) {
		t.Errorf("key a applied %v; want [1]: the second record is the same event", got)
	}
}

// When records of two keys fail, the response reports the first in the batch, whichever key
// it is: Lambda checkpoints at the lowest sequence number reported, and a later one reported
// alone would lose the earlier failure.
func TestProcessor_reports_the_first_failure_across_keys(t *testing.T) {
	t.Parallel()
	e := newStreamEnv(t)
	e.write(t, "a", 1)
	e.write(t, "b", 1)
	e.write(t, "a", 2)
	e.write(t, "b", 2)
	recs := e.records(t)
	e.failOnce("a", 2, errors.New("downstream timed out"))
	e.failOnce("b", 1, errors.New("downstream timed out"))
	p, err := kinesisbatch.New(e.consumer(t, idempotency.GoOn), kinesisbatch.Config{})
	if err != nil {
		t.Fatal(err)
	}
	if failed := handle(t, p, recs); !slices.Equal(failed, []string{recs[1].Kinesis.SequenceNumber}) {
		t.Fatalf("BatchItemFailures = %v; want b1's %s, the first failure of the batch", failed, recs[1].Kinesis.SequenceNumber)
	}
	if failed := handle(t, p, from(recs, recs[1].Kinesis.SequenceNumber)); len(failed) > 0 {
		t.Fatalf("redelivery BatchItemFailures = %v; want none", failed)
	}
	for _, item := range []string{"a", "b"} {
		if got := e.applied(t, item); !slices.Equal(got, []int{1, 2}) {
			t.Errorf("key %s applied %v; want [1 2]", item, got)
		}
	}
}

// A partition key SQS would refuse as a MessageGroupId (a space, a non-ASCII letter; SQS takes
// 1 to 128 of letters, digits and ASCII punctuation) still dead-letters its record: the letter's
// group in the queue is the key's digest, and the letter keeps the key itself, as the hold
// names it. fauxqs does not check the group's characters, so the test checks the group sent.
func TestProcessor_dead_letters_a_record_whose_key_SQS_refuses_as_a_group(t *testing.T) {
	t.Parallel()
	e := newStreamEnv(t)
	sq := testenv.SQS(t)
	dlq := apptest.FIFOQueue(t, sq, "kinesis-dlq")
	e.put(t, "compte é 1", []byte(`{"item":"é","n":-1}`))
	p, err := kinesisbatch.New(e.consumer(t, idempotency.GoOn), kinesisbatch.Config{DeadLetter: deadletter.New(sq, dlq)})
	if err != nil {
		t.Fatal(err)
	}
	if failed := handle(t, p, e.records(t)); len(failed) > 0 {
		t.Fatalf("BatchItemFailures = %v; want none: the record dead-lettered", failed)
	}
	letters := apptest.Drain(t, sq, dlq)
	if len(letters) != 1 {
		t.Fatalf("dead letters = %d; want 1", len(letters))
	}
	if g := letters[0].Attributes["MessageGroupId"]; g != batch.GroupID("compte é 1") || !strings.HasPrefix(g, "sha256-") {
		t.Errorf("letter's MessageGroupId %q; want the key's digest, which SQS accepts", g)
	}
	if g := aws.ToString(letters[0].MessageAttributes[deadletter.AttrSourceGroupID].StringValue); g != "compte é 1" {
		t.Errorf("letter's %s %q; want the key as it is, the hold's group", deadletter.AttrSourceGroupID, g)
	}
}
