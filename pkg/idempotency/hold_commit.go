package idempotency

import (
	"context"
	"errors"
	"slices"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// throughHold settles a commit that the group's hold (old, as the cancellation returned it)
// refused: the head of the held list is committed again with the write that takes it off the
// hold, in the same transaction as its effect; any other event of the group is held (it joins
// the end of the list) and fails with a HeldError, to be dead-lettered after the others. Only
// this recovery path pays round trips beyond the one transaction.
func (c *Consumer) throughHold(ctx context.Context, p prepared, old map[string]types.AttributeValue) (Result, bool, error) {
	w, err := c.passHold(ctx, p.rec, old)
	var de *DecidedError
	if errors.As(err, &de) { // decided since its commit was refused: a duplicate, off the list
		res, err := c.releasedAfter(ctx, p.rec, verdict{})(c.existing(ctx, p.res, de.record, p.rec.PayloadHash))
		return res, true, err
	}
	if err != nil {
		res := p.res
		res.Outcome = Failed
		return res, true, err
	}
	p.items = slices.Clone(p.items)
	p.items[p.heldIndex], p.passing = w, true
	res, err := c.commit(ctx, p)
	return res, true, err
}
