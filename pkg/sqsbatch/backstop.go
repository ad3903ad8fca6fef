package sqsbatch

import (
	"context"

	"github.com/aws/aws-lambda-go/events"

	"github.com/onceflow/onceflow/pkg/batch"
)

// backstop is batch.Backstop of the batch's messages, by their MessageGroupId and the id each
// was first sent as (Delivery.OriginID): it holds before any payload is read or decoded, so a
// message whose payload is never read holds its group too.
func (h decoding) backstop(ctx context.Context, recs []events.SQSMessage) map[int]bool {
	msgs := make([]batch.Queued, len(recs))
	for i, m := range recs {
		d := DeliveryOf(m)
		msgs[i] = batch.Queued{MessageID: m.MessageId, Group: d.Group, OriginID: d.OriginID(), ReceiveCount: d.ReceiveCount}
	}
	return batch.Backstop(ctx, h.e, h.maxReceiveCount, msgs)
}
