package testenv

import (
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/onceflow/onceflow/pkg/testkit"
)

// Written is what StreamWrites expects of a batch delivered twice.
type Written struct {
	Counted string // the metric its record counts under, at least once
	Writes  int64  // the DynamoDB write requests of both deliveries
	Records int    // the idempotency records after them
}

// StreamWrites delivers batch twice, the second time as Lambda delivers it again, to the
// stream consumer that newConsumer builds on a DynamoDB client counting its requests, a new
// idempotency table idem and a table for its effects. It checks what was written and counted,
// and that nothing was reported failed (size is how many records a batch has) or
// dead-lettered.
func StreamWrites[E any](t *testing.T, newConsumer func(db *dynamodb.Client, idem, table string) *testkit.StreamConsumer[E],
	batch E, size func(E) int, want Written) {
	t.Helper()
	requests := &Requests{}
	db := testkit.DynamoDB(t, dynamodb.WithAPIOptions(requests.Middleware))
	idem := testkit.IdempotencyTable(t, db)
	c := newConsumer(db, idem, testkit.Table(t, db, "totals", "pk"))
	before := requests.Writes()
	for delivery := range 2 {
		if again := c.Receive(batch); size(again) != 0 {
			t.Fatalf("delivery %d: %d records reported failed", delivery+1, size(again))
		}
	}
	if got := requests.Writes() - before; got != want.Writes {
		t.Errorf("writes: %d (%s); want %d", got, requests, want.Writes)
	}
	if got := c.Count(want.Counted); got < 1 {
		t.Errorf("%s counted %v times; want at least once", want.Counted, got)
	}
	if got := Items(t, db, idem); got != want.Records {
		t.Errorf("idempotency records: %d; want %d", got, want.Records)
	}
	if dead := c.DeadLetters(); len(dead) != 0 {
		t.Errorf("dead-lettered: %v", dead[0].Reason)
	}
}
