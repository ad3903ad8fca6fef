package idempotency

import (
	"context"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
)

// discarded reports whether an operator discarded event eventID for this consumer (a live
// record of the outcome Discarded). It costs a read, and is asked on the failure path only: a
// message that can never succeed, about to hold its group or be dead-lettered again.
func (c *core) discarded(ctx context.Context, eventID string) (Record, bool, error) {
	var res Result
	old, err := c.read(ctx, &res, Key(c.cfg.Name, eventID))
	if err != nil || old == nil {
		return Record{}, false, err
	}
	var rec Record
	if attributevalue.UnmarshalMap(old, &rec) != nil {
		return Record{}, false, nil
	}
	return rec, rec.Outcome == string(Discarded) && rec.ExpiresAt >= c.cfg.Now().Unix(), nil
}

// answerDiscarded turns a malformed event that an operator discarded into a duplicate of the
// discarded one: its redelivery is answered, never dead-lettered or holding its group again.
// Any other malformed event stays malformed (err); a failed read leaves it so too.
func (c *core) answerDiscarded(ctx context.Context, res Result, err error) (Result, error) {
	rec, ok, rerr := c.discarded(ctx, res.EventID)
	if rerr != nil || !ok {
		res.Outcome = Malformed
		return res, err
	}
	res.Outcome, res.Stored, res.Reason = Duplicate, Discarded, rec.Reason
	return res, nil
}
