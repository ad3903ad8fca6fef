// Command api is the HTTP API function: notes, credits and debits written with their outbox
// events, and reads of notes, tags and accounts.
package main

import (
	"github.com/onceflow/onceflow/internal/app"
	"github.com/onceflow/onceflow/internal/config"
)

func main() { app.Start("api", config.LoadAPI, app.NewAPI) }
