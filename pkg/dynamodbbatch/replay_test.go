package dynamodbbatch_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/aws/aws-lambda-go/events"

	"github.com/onceflow/onceflow/pkg/batch"
	"github.com/onceflow/onceflow/pkg/deadletter"
	"github.com/onceflow/onceflow/pkg/dynamodbbatch"
	"github.com/onceflow/onceflow/pkg/internal/testenv"
	"github.com/onceflow/onceflow/pkg/port"
)

// A held key's letters redriven to the consumer's replay queue are applied in order while the
// DynamoDB Streams stream goes on, one replay's answer lost changing nothing; a replay the queue moves by
// itself holds its key on its last receives until it is redriven (testenv.StreamReplay). The
// function is one Invoke for both event sources, as Lambda calls it.
func TestProcessor_a_held_key_is_replayed_in_order_while_its_stream_goes_on(t *testing.T) {
	t.Parallel()
	testenv.StreamReplay(t, streamPort, func(t *testing.T, e port.Engine, dl *deadletter.Queue, rc batch.ReplayConfig) testenv.ReplayPort[events.DynamoDBEventRecord] {
		p, err := dynamodbbatch.New(e, dynamodbbatch.Config{Options: batch.Options{DeadLetter: dl}, Replay: rc})
		if err != nil {
			t.Fatal(err)
		}
		invoke := func(ctx context.Context, ev, resp any) {
			payload, _ := json.Marshal(ev)
			out, err := p.Invoke(ctx, payload)
			if err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal(out, resp); err != nil {
				t.Fatal(err)
			}
		}
		return testenv.ReplayPort[events.DynamoDBEventRecord]{
			Stream: func(recs []events.DynamoDBEventRecord) []string {
				var resp events.DynamoDBEventResponse
				invoke(t.Context(), events.DynamoDBEvent{Records: recs}, &resp)
				var seqs []string
				for _, f := range resp.BatchItemFailures {
					seqs = append(seqs, f.ItemIdentifier)
				}
				return seqs
			},
			Replay: func(ctx context.Context, ev events.SQSEvent) events.SQSEventResponse {
				var resp events.SQSEventResponse
				invoke(ctx, ev, &resp)
				return resp
			},
		}
	})
}
