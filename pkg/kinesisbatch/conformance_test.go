package kinesisbatch_test

import (
	"context"
	"testing"

	"github.com/aws/aws-lambda-go/events"

	"github.com/onceflow/onceflow/pkg/batch"
	"github.com/onceflow/onceflow/pkg/batch/batchtest"
	"github.com/onceflow/onceflow/pkg/kinesisbatch"
	"github.com/onceflow/onceflow/pkg/port"
)

// kinesisHarness is the Kinesis port for the conformance suite: records put to kinesalite and
// read back as Lambda delivers them, decoded by the CloudEvents decoder (the event's id the
// key, so that a record put twice is one event).
type kinesisHarness struct {
	s    *stream
	read int // records handed out so far
}

func (h *kinesisHarness) Records(t *testing.T, msgs ...batchtest.Message) []events.KinesisEventRecord {
	t.Helper()
	for _, m := range msgs {
		h.s.put(t, m.Group, m.Body)
	}
	recs := h.s.records(t)[h.read:]
	h.read += len(recs)
	return recs
}

func (*kinesisHarness) Port(t *testing.T, e port.Engine, dl batch.DeadLetterer, opts batchtest.Options) batchtest.Handler[events.KinesisEventRecord] {
	t.Helper()
	p, err := kinesisbatch.New(e, kinesisbatch.Config{Options: batch.Options{DeadLetter: dl, NoPacking: opts.NoPacking},
		Decoder: kinesisbatch.DecoderFunc(kinesisbatch.CloudEventData)})
	if err != nil {
		t.Fatal(err)
	}
	return func(ctx context.Context, recs []events.KinesisEventRecord) []string {
		resp, err := p.Handle(ctx, events.KinesisEvent{Records: recs})
		if err != nil {
			t.Fatal(err)
		}
		var seqs []string
		for _, f := range resp.BatchItemFailures {
			seqs = append(seqs, f.ItemIdentifier)
		}
		return seqs
	}
}

func (*kinesisHarness) Again(r events.KinesisEventRecord) events.KinesisEventRecord { return r }
func (*kinesisHarness) ID(r events.KinesisEventRecord) string                       { return r.Kinesis.SequenceNumber }
func (*kinesisHarness) Letter(r events.KinesisEventRecord) events.SQSMessage {
	return kinesisbatch.Message(r)
}
func (*kinesisHarness) Source() batchtest.Source { return batchtest.Source{Checkpoints: true} }

func TestProcessor_conforms_to_the_port_suite(t *testing.T) {
	t.Parallel()
	batchtest.Run(t, func(t *testing.T) batchtest.Harness[events.KinesisEventRecord] {
		return &kinesisHarness{s: newStream(t)}
	})
}
