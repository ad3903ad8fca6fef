package sqsbatch

import (
	"context"

	"github.com/onceflow/onceflow/pkg/cloudevent"
	"github.com/onceflow/onceflow/pkg/idempotency"
)

// PackWidth is how many groups a packing Processor runs at once when Concurrency is lower:
// the messages of one SQS FIFO batch (at most 10) then share one transaction.
const PackWidth = 10

// packer is an Applier whose commits can be shared: *idempotency.Consumer.
type packer interface {
	NewPack(members int) *idempotency.Pack
}

type packKey struct{}

// packOf returns the pack the batch being handled commits into, or nil.
func packOf(ctx context.Context) *idempotency.Pack {
	pk, _ := ctx.Value(packKey{}).(*idempotency.Pack)
	return pk
}

// packer returns the Applier's packer when this processor packs.
func (p *Processor) packer() packer {
	d, ok := p.handler.(decoding)
	if !ok || p.cfg.NoPacking {
		return nil
	}
	pk, _ := d.a.(packer)
	return pk
}

// workers is how many groups run at once.
func (p *Processor) workers(groups int) int {
	if p.packer() != nil {
		return min(max(p.cfg.Concurrency, PackWidth), groups)
	}
	return min(p.cfg.Concurrency, groups)
}

// packing returns ctx carrying a pack shared by workers goroutines, and the function each
// calls when it is done; without packing, ctx and a function doing nothing.
func (p *Processor) packing(ctx context.Context, workers int) (context.Context, func()) {
	pk := p.packer()
	if pk == nil {
		return ctx, func() {}
	}
	pack := pk.NewPack(workers)
	return context.WithValue(ctx, packKey{}, pack), func() { pack.Leave(ctx) }
}

// apply applies ev with the batch's pack when there is one (see Processor.packing), else with
// the Applier alone.
func (h decoding) apply(ctx context.Context, ev cloudevent.Event, d idempotency.Delivery) (idempotency.Result, error) {
	if pk := packOf(ctx); pk != nil {
		return pk.Apply(ctx, ev, d)
	}
	return h.a.Apply(ctx, ev, d)
}
