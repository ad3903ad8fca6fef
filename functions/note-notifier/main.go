// Command note-notifier consumes note.created events from its own FIFO queue and POSTs one
// notification per note to a webhook, with an Idempotency-Key derived from the idempotency
// key, under a fenced lease (lease.Consumer): a crash between the call and its
// completion repeats the call with the same key, and nothing else repeats it.
package main

import (
	"github.com/onceflow/onceflow/internal/app"
	"github.com/onceflow/onceflow/internal/config"
)

func main() { app.Start("note-notifier", config.LoadNotifier, app.NewNoteNotifier) }
