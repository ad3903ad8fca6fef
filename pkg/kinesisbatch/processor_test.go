package kinesisbatch_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"

	"github.com/onceflow/onceflow/pkg/batch"
	"github.com/onceflow/onceflow/pkg/deadletter"
	"github.com/onceflow/onceflow/pkg/idempotency"
	"github.com/onceflow/onceflow/pkg/kinesisbatch"
	"github.com/onceflow/onceflow/pkg/testkit"
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
	p, err := kinesisbatch.New(e.consumer(t, idempotency.GoOn).Engine(), kinesisbatch.Config{})
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
	sq := testkit.SQS(t)
	dlq := testkit.CreateFIFOQueue(t, sq, "kinesis-dlq")
	e.put(t, "compte é 1", []byte(`{"item":"é","n":-1}`))
	p, err := kinesisbatch.New(e.consumer(t, idempotency.GoOn).Engine(), kinesisbatch.Config{Options: batch.Options{DeadLetter: deadletter.New(sq, dlq)}})
	if err != nil {
		t.Fatal(err)
	}
	if failed := handle(t, p, e.records(t)); len(failed) > 0 {
		t.Fatalf("BatchItemFailures = %v; want none: the record dead-lettered", failed)
	}
	letters := testkit.Drain(t, sq, dlq)
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
