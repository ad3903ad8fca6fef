package workload

import (
	"encoding/json"
	"log/slog"
	"net/http"

	"github.com/onceflow/onceflow/internal/webhooktest"
)

// NewReceiver starts the webhook receiver the note-notifier posts to on loopback: it answers 200
// to every JSON notification with a noteId and 400 to anything else; logger, when not nil, logs
// every notification.
func NewReceiver(logger *slog.Logger) (*webhooktest.Receiver, error) {
	r, err := webhooktest.NewReceiver()
	if err != nil {
		return nil, err
	}
	r.Respond(func(c webhooktest.Call) int {
		note := noteID(c)
		if note == "" {
			return http.StatusBadRequest
		}
		if logger != nil {
			logger.Info("webhook call", "noteId", note, "idempotencyKey", c.Key())
		}
		return http.StatusOK
	})
	return r, nil
}

// notifications returns the number of notifications r received and, per note id, the calls per
// Idempotency-Key; calls that name no note are not counted.
func notifications(r *webhooktest.Receiver) (int, map[string]map[string]int) {
	n, keys := 0, map[string]map[string]int{}
	for _, c := range r.Calls() {
		note := noteID(c)
		if note == "" {
			continue
		}
		n++
		if keys[note] == nil {
			keys[note] = map[string]int{}
		}
		keys[note][c.Key()]++
	}
	return n, keys
}

// noteID is the noteId of a notification, "" when the call is not one.
func noteID(c webhooktest.Call) string {
	var body struct {
		NoteID string `json:"noteId"`
	}
	if json.Unmarshal(c.Body, &body) != nil {
		return ""
	}
	return body.NoteID
}
