package main

import (
	"context"

	"github.com/onceflow/onceflow/pkg/deadletter"
	"github.com/onceflow/onceflow/pkg/operator"
)

// eventIDOf is the id of the event letter l carries, as the consumer knows it: the one the
// consumer decoded and wrote on the letter (deadletter.AttrEventID); else the event id of the
// entry of l's group's held list for the message l was first sent as (a letter written before
// the consumer wrote its event id, or one SQS moved by itself after it was held); else the id
// its body shows as a CloudEvent. Only the first two are right for every decoder (an
// EventBridge envelope keyed by a business key, a claim check's pointer).
func eventIDOf(ctx context.Context, a *operator.Admin, consumer string, l deadletter.Letter) (string, error) {
	if l.DecodedEventID != "" {
		return l.DecodedEventID, nil
	}
	if l.GroupID != "" {
		h, ok, err := a.Hold(ctx, consumer, l.GroupID)
		if err != nil {
			return "", err
		}
		for _, e := range h.Held {
			if ok && e.MessageID == l.OriginalMessage && e.EventID != "" {
				return e.EventID, nil
			}
		}
	}
	return l.EventID, nil
}
