// Command ledger consumes account.credited and account.debited events from the ledger FIFO queue
// and applies each to its account's balance exactly once.
package main

import (
	"github.com/onceflow/onceflow/internal/app"
	"github.com/onceflow/onceflow/internal/config"
)

func main() { app.Start("ledger", config.LoadConsumer, app.NewLedger) }
