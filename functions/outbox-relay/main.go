// Command outbox-relay publishes new outbox items from the app table's stream to their FIFO
// queues, with the event id as deduplication id.
package main

import (
	"github.com/onceflow/onceflow/internal/app"
	"github.com/onceflow/onceflow/internal/config"
)

func main() { app.Start("outbox-relay", config.LoadRelay, app.NewRelay) }
