package workload

import (
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/onceflow/onceflow/internal/webhooktest"
)

// Config sizes the workload. The zero value runs the default demo.
type Config struct {
	Notes     int // notes created; default 200
	Movements int // credits and debits; default 1000
	Accounts  int // accounts the movements spread over; default 50
	// RetryRate is the share of API requests sent a second time with the same Idempotency-Key
	// or reference; default 0.2. ResendRate is the share of accepted events re-sent straight to
	// their queues under a new deduplication id; default 0.1. Negative means none.
	RetryRate, ResendRate float64
	// Malformed is the number of malformed messages injected into each consumer queue; default
	// 3, negative means none.
	Malformed int
	// Concurrency is the number of concurrent API clients; default 8.
	Concurrency int
	// Seed makes the workload reproducible; default 1.
	Seed int64
	// Progress receives a progress line every ProgressEvery (default 3 s), with the calls the
	// gatekeeper denied, each refusal once with why; nil shows none.
	Progress      io.Writer
	ProgressEvery time.Duration
	// StopOnDenial stops the run within seconds of the gatekeeper's first refusal: Run returns
	// a *DeniedError naming it, rather than waiting for the pipeline to drain without the call.
	StopOnDenial bool
	// DrainTimeout bounds each wait for the pipeline to drain; default 5 minutes.
	DrainTimeout time.Duration
	// Receiver, when set, is the webhook receiver the note-notifier posts to; its calls are
	// checked. Crash, when set, is the crash injected into the cloud; it is reported.
	Receiver *webhooktest.Receiver
	Crash    *Crash
	// Redrive, when set, waits after the requests until the consumer queues are empty, then
	// moves every message of each dead-letter queue back to its source queue, before draining.
	Redrive bool
	// Poison is the number of accounts the recovery drill poisons mid-run with a producer's bad
	// message (malformed, conflict, ...), then recovers with the operator's CLI at CLI (the
	// onceflow binary) following docs/runbook.md while the traffic goes on; 0: no drill.
	Poison int
	CLI    string
}

func (c Config) withDefaults() (Config, error) {
	def := func(v *int, d int) {
		if *v == 0 {
			*v = d
		}
	}
	def(&c.Notes, 200)
	def(&c.Movements, 1000)
	def(&c.Accounts, 50)
	def(&c.Malformed, 3)
	def(&c.Concurrency, 8)
	c.Malformed = max(c.Malformed, 0)
	rate := func(v *float64, d float64) {
		if *v == 0 {
			*v = d
		}
		*v = max(*v, 0)
	}
	rate(&c.RetryRate, 0.2)
	rate(&c.ResendRate, 0.1)
	if c.Seed == 0 {
		c.Seed = 1
	}
	if c.ProgressEvery == 0 {
		c.ProgressEvery = 3 * time.Second
	}
	if c.DrainTimeout == 0 {
		c.DrainTimeout = 5 * time.Minute
	}
	return c, c.Validate()
}

// Validate reports every problem of c.
func (c Config) Validate() error {
	var errs []error
	for name, v := range map[string]int{"notes": c.Notes, "movements": c.Movements, "concurrency": c.Concurrency} {
		if v < 0 {
			errs = append(errs, fmt.Errorf("%s: %d is negative", name, v))
		}
	}
	if c.Poison < 0 || c.Poison > c.Accounts {
		errs = append(errs, fmt.Errorf("poison: %d, want 0 to the %d accounts", c.Poison, c.Accounts))
	}
	if c.Poison > 0 && c.CLI == "" {
		errs = append(errs, fmt.Errorf("poison: %d accounts, but no CLI (the onceflow binary) to recover them with", c.Poison))
	}
	if c.Movements > 0 && c.Accounts < 1 {
		errs = append(errs, fmt.Errorf("accounts: %d, want at least 1 for %d movements", c.Accounts, c.Movements))
	}
	for name, v := range map[string]float64{"retry rate": c.RetryRate, "resend rate": c.ResendRate} {
		if v > 1 {
			errs = append(errs, fmt.Errorf("%s: %g is more than 1", name, v))
		}
	}
	return errors.Join(errs...)
}
