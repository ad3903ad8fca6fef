package dynamodbbatch_test

import (
	"testing"

	"github.com/aws/aws-lambda-go/events"

	"github.com/onceflow/onceflow/pkg/batch"
	"github.com/onceflow/onceflow/pkg/deadletter"
	"github.com/onceflow/onceflow/pkg/dynamodbbatch"
	"github.com/onceflow/onceflow/pkg/internal/testenv"
	"github.com/onceflow/onceflow/pkg/port"
)

// Each call of the DynamoDB Streams port IAM may deny (commit, count, hold write, dead-letter
// send) leaves its record for redelivery, uncounted and undead-lettered, its item not held for
// it, the denial logged and counted; granted, it is applied (testenv.StreamDenials).
func TestProcessor_a_denied_call_leaves_its_record_for_redelivery_until_granted(t *testing.T) {
	t.Parallel()
	testenv.StreamDenials(t, streamPort)
}

// streamPort is the port's test over a stream of its own, as the contract suites run it.
func streamPort(t *testing.T) testenv.StreamPort[events.DynamoDBEventRecord] {
	e := newStreamEnv(t)
	return testenv.StreamPort[events.DynamoDBEventRecord]{
		Write: e.write, Records: e.records, From: from, FailOnce: e.failOnce, Applied: e.applied, Table: e.idem,
		Decide: e.decide, Group: dynamodbbatch.Key,
		Seq: func(r events.DynamoDBEventRecord) string { return r.Change.SequenceNumber },
		ID:  func(r events.DynamoDBEventRecord) string { return r.EventID },
		New: func(t *testing.T, c port.Engine, dl *deadletter.Queue) func([]events.DynamoDBEventRecord) []string {
			p, err := dynamodbbatch.New(c, dynamodbbatch.Config{Options: batch.Options{DeadLetter: dl}})
			if err != nil {
				t.Fatal(err)
			}
			return func(recs []events.DynamoDBEventRecord) []string { return handle(t, p, recs) }
		},
	}
}
