// Command note-tagger consumes note.created events from the notes FIFO queue and writes each
// note's tags exactly once.
package main

import (
	"github.com/onceflow/onceflow/internal/app"
	"github.com/onceflow/onceflow/internal/config"
)

func main() { app.Start("note-tagger", config.LoadConsumer, app.NewNoteTagger) }
