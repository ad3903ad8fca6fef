package batch

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/onceflow/onceflow/pkg/internal/denied"
	"github.com/onceflow/onceflow/pkg/port"
)

// BackstopReceives is on how many of its last receives before a queue's maxReceiveCount a
// message's group is held before the message is handled: two, so that one hold write that
// fails is made again on the very last receive.
const BackstopReceives = 2

// Queued is what a backstop knows of a queue's message before it reads or decodes it.
type Queued struct {
	MessageID    string // the queue's id of this delivery, for logs
	Group        string // the group as the hold names it; "" holds nothing
	OriginID     string // the id the group's held list knows the message by (port.Delivery.OriginID)
	ReceiveCount int    // ApproximateReceiveCount
}

// Backstop holds (Engine.HoldAhead), under e's HoldGroup policy and before a batch runs, the
// group of every message on its last BackstopReceives receives before the queue's maxReceiveCount, naming it
// and every later message of its group in the batch, in batch order: should these receives
// crash or time out too, the queue moves the message to its dead-letter queue by itself, with
// its group-mates that rode along untried, and the group must be held behind them in their
// order, as behind messages the engine dead-letters. A message held already keeps its place;
// each message's commit takes it off when it succeeds (or its duplicate does). It returns the
// indices of the messages it held (or tried to hold). A hold that cannot be written is logged
// and the messages handled as usual: they may succeed, and refusing them would move them
// unheld. maxReceiveCount 0 (unknown, or no redrive policy) holds nothing.
func Backstop(ctx context.Context, e port.Engine, maxReceiveCount int, msgs []Queued) map[int]bool {
	if maxReceiveCount == 0 {
		return nil
	}
	var order []string
	groups := map[string][]int{}
	for i, m := range msgs {
		if m.Group == "" {
			continue
		}
		if _, on := groups[m.Group]; !on && m.ReceiveCount <= maxReceiveCount-BackstopReceives {
			continue
		}
		if _, on := groups[m.Group]; !on {
			order = append(order, m.Group)
		}
		groups[m.Group] = append(groups[m.Group], i)
	}
	held := map[int]bool{}
	log, rec := e.Logger(), e.Metrics()
	for _, g := range order {
		list := make([]port.Held, len(groups[g]))
		for n, i := range groups[g] {
			list[n].MessageID = msgs[i].OriginID
		}
		first := msgs[groups[g][0]]
		list[0].Reason = fmt.Sprintf("received %d times of the queue's maxReceiveCount %d: held before it was handled, in case the queue moved it to its dead-letter queue by itself (a crash, a timeout, out of memory)",
			first.ReceiveCount, maxReceiveCount)
		holds, err := e.HoldAhead(ctx, g, list)
		if holds { // written, or tried: each message's commit takes it off (Delivery.HoldWritten)
			for _, i := range groups[g] {
				held[i] = true
			}
		}
		if denial, ok := denied.Of(err); ok {
			denied.Log(ctx, log, rec, denial, "holding the group before its messages' last receives, messages handled",
				slog.String("consumer", e.Name()), slog.String("messageId", first.MessageID), slog.String("group", g),
				slog.Int("count", len(list)))
			continue
		}
		if err != nil {
			log.LogAttrs(ctx, slog.LevelError, "group not held before its messages' last receives, messages handled",
				slog.String("consumer", e.Name()), slog.String("messageId", first.MessageID), slog.String("group", g),
				slog.Int("count", len(list)), slog.String("error", err.Error()))
		}
	}
	return held
}
