package workload

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"

	"github.com/onceflow/onceflow/infra/localcloud"
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

// Template parameters that name the SSM parameters of the note-notifier's webhook.
const (
	WebhookURLParameterName    = "WebhookUrlParameterName"
	WebhookSecretParameterName = "WebhookSecretParameterName"
)

// ServeWebhookParameters gives the receiver's URL and signing secret to the note-notifier as a
// deployer does in AWS: as the values of the SSM parameters the template's parameters name
// (their overrides in cfg.Parameters, else their defaults in the template at path), served by
// the local cloud's parameter store (cfg.SSMParameters). It does nothing for a template that
// declares neither.
func ServeWebhookParameters(cfg *localcloud.Config, path string, r *webhooktest.Receiver) error {
	t, err := localcloud.LoadTemplate(path)
	if err != nil {
		return err
	}
	if cfg.SSMParameters == nil {
		cfg.SSMParameters = map[string]string{}
	}
	for param, value := range map[string]string{WebhookURLParameterName: r.URL, WebhookSecretParameterName: r.Secret} {
		if !t.Declares(param) {
			continue
		}
		name, ok := cfg.Parameters[param]
		if !ok {
			name = t.Parameters[param]
		}
		if name == "" {
			return fmt.Errorf("template parameter %s has no value", param)
		}
		cfg.SSMParameters[name] = value
	}
	return nil
}
