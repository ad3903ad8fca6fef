package main

import (
	"context"
	"fmt"
	"strings"
)

// routes returns the queue URLs of each event type: the --route flags if any, else the
// relay's routes as the stack's OutboxRoutes output states them, so that a republish goes
// where the relay sends.
func (t *target) routes(ctx context.Context, flags []string) (map[string][]string, error) {
	if len(flags) == 0 {
		if t.stack == nil || t.stack.routes == "" {
			return nil, usageError("give --route TYPE=QUEUE, or --stack (or --local) whose " + outputRoutes + " output states the relay's routes")
		}
		flags = strings.Split(t.stack.routes, ",")
	}
	rt := map[string][]string{}
	for _, f := range flags {
		typ, queue, ok := strings.Cut(strings.TrimSpace(f), "=")
		if !ok || typ == "" || queue == "" {
			return nil, usageError(fmt.Sprintf("route %q: want TYPE=QUEUE", f))
		}
		url, err := t.queueURL(ctx, queue)
		if err != nil {
			return nil, err
		}
		rt[typ] = append(rt[typ], url)
	}
	return rt, nil
}
