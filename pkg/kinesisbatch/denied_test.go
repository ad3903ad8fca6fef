package kinesisbatch_test

import (
	"testing"

	"github.com/aws/aws-lambda-go/events"

	"github.com/onceflow/onceflow/pkg/batch"
	"github.com/onceflow/onceflow/pkg/deadletter"
	"github.com/onceflow/onceflow/pkg/internal/testenv"
	"github.com/onceflow/onceflow/pkg/kinesisbatch"
	"github.com/onceflow/onceflow/pkg/port"
)

// Each call of the Kinesis port IAM may deny (commit, count, hold write, dead-letter send)
// leaves its record for redelivery, uncounted and undead-lettered, its partition key not held
// for it, the denial logged and counted; granted, it is applied (testenv.StreamDenials).
func TestProcessor_a_denied_call_leaves_its_record_for_redelivery_until_granted(t *testing.T) {
	t.Parallel()
	testenv.StreamDenials(t, streamPort)
}

// streamPort is the port's test over a stream of its own, as the contract suites run it.
func streamPort(t *testing.T) testenv.StreamPort[events.KinesisEventRecord] {
	e := newStreamEnv(t)
	return testenv.StreamPort[events.KinesisEventRecord]{
		Write: e.write, Records: e.records, From: from, FailOnce: e.failOnce, Applied: e.applied, Table: e.idem,
		Decide: e.decide,
		Seq:    func(r events.KinesisEventRecord) string { return r.Kinesis.SequenceNumber },
		ID:     func(r events.KinesisEventRecord) string { return r.EventID },
		Group:  func(r events.KinesisEventRecord) string { return r.Kinesis.PartitionKey },
		New: func(t *testing.T, c port.Engine, dl *deadletter.Queue) func([]events.KinesisEventRecord) []string {
			p, err := kinesisbatch.New(c, kinesisbatch.Config{Options: batch.Options{DeadLetter: dl}})
			if err != nil {
				t.Fatal(err)
			}
			return func(recs []events.KinesisEventRecord) []string { return handle(t, p, recs) }
		},
	}
}
