package sqsbatch_test

import (
	"context"
	"testing"

	"github.com/aws/aws-lambda-go/events"

	"github.com/onceflow/onceflow/pkg/batch"
	"github.com/onceflow/onceflow/pkg/batch/batchtest"
	"github.com/onceflow/onceflow/pkg/port"
	"github.com/onceflow/onceflow/pkg/sqsbatch"
	"github.com/onceflow/onceflow/pkg/testkit"
)

// sqsHarness is the SQS port for the conformance suite: FIFO batches built as Lambda hands
// them (several messages of one group in one batch, which fauxqs never hands out), decoded as
// CloudEvents by NewFor's default decoder.
type sqsHarness struct{ q *testkit.Queue }

func (h sqsHarness) Records(_ *testing.T, msgs ...batchtest.Message) []events.SQSMessage {
	out := make([]events.SQSMessage, len(msgs))
	for i, m := range msgs {
		out[i] = h.q.Message(m.Group, string(m.Body))
	}
	return out
}

func (sqsHarness) Port(t *testing.T, e port.Engine, dl batch.DeadLetterer, opts batchtest.Options) batchtest.Handler[events.SQSMessage] {
	t.Helper()
	p, err := sqsbatch.NewFor(e, sqsbatch.Config{Options: batch.Options{DeadLetter: dl, NoPacking: opts.NoPacking}})
	if err != nil {
		t.Fatal(err)
	}
	return func(ctx context.Context, recs []events.SQSMessage) []string {
		resp, err := p.Handle(ctx, testkit.Batch(recs...))
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, f := range resp.BatchItemFailures {
			ids = append(ids, f.ItemIdentifier)
		}
		return ids
	}
}

func (sqsHarness) Again(m events.SQSMessage) events.SQSMessage  { return testkit.Again(m) }
func (sqsHarness) ID(m events.SQSMessage) string                { return m.MessageId }
func (sqsHarness) Letter(m events.SQSMessage) events.SQSMessage { return m }
func (sqsHarness) Source() batchtest.Source                     { return batchtest.Source{} }

func TestProcessor_conforms_to_the_port_suite(t *testing.T) {
	t.Parallel()
	batchtest.Run(t, func(t *testing.T) batchtest.Harness[events.SQSMessage] {
		return sqsHarness{q: testkit.FIFO(testkit.Name("conformance"))}
	})
}
