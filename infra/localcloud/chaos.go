package localcloud

import (
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"sync"
	"time"
)

// Fault kinds the local cloud injects (Config.Chaos), the keys of Stats.Faults.
const (
	FaultThrottle     = "throttle"           // DynamoDB or SQS throttling, 400 with the service's error body
	FaultServerError  = "server-error"       // 500 InternalServerError
	FaultConflict     = "txn-conflict"       // TransactWriteItems cancelled with a TransactionConflict reason
	FaultResetBefore  = "reset-before"       // connection reset before the request reached the emulator
	FaultResetAfter   = "reset-after"        // connection reset after the emulator answered: it took effect
	FaultLatency      = "latency"            // the request held back before it is forwarded
	FaultKillDuring   = "kill-during-invoke" // an execution environment killed while it runs an invocation
	FaultKillAfterAck = "kill-after-commit"  // an environment killed after its invocation returned
	// FaultOutage counts the requests a Cloud.Outage answered with a 500; it is not one of
	// FaultKinds (never drawn at random).
	FaultOutage = "outage"
)

// FaultKinds lists every fault kind, in the order summaries show them.
var FaultKinds = []string{FaultThrottle, FaultServerError, FaultConflict, FaultResetBefore, FaultResetAfter,
	FaultLatency, FaultKillDuring, FaultKillAfterAck}

// Chaos is the fault injection of a local cloud: each rate is the share (0 to 1) of requests
// from a function to DynamoDB or SQS (or of invocations, for the kills) that get that fault.
// Functions then reach the emulators through a fault-injecting proxy each (their
// AWS_ENDPOINT_URL_* point at it); Endpoints and everything else reach the emulators directly.
// The zero value injects nothing and starts no proxy.
type Chaos struct {
	Throttle, ServerError, Conflict, ResetBefore, ResetAfter, Latency float64
	// KillDuring kills the environment a random moment into an invocation (within
	// KillWindow, default 40 ms; an invocation that ends first is not killed nor counted);
	// KillAfter kills it after the invocation returned, its answer dropped.
	KillDuring, KillAfter float64
	KillWindow            time.Duration
	// MaxLatency bounds the latency added (uniform, default 200 ms).
	MaxLatency time.Duration
	// Seed makes the choices reproducible (default 1); concurrency still orders them.
	Seed uint64
	// Outages starts the fault proxies even when no rate is set, so that Cloud.Outage can cut
	// the functions off a service for as long as a test wants.
	Outages bool
}

// Enabled reports whether any fault is injected.
func (c Chaos) Enabled() bool { return c.proxied() || c.KillDuring > 0 || c.KillAfter > 0 }

func (c Chaos) proxied() bool {
	return c.Outages || c.Throttle+c.ServerError+c.Conflict+c.ResetBefore+c.ResetAfter+c.Latency > 0
}

// Validate reports every rate outside 0 to 1, and proxy rates summing past 1.
func (c Chaos) Validate() error {
	var errs []error
	rates := map[string]float64{FaultThrottle: c.Throttle, FaultServerError: c.ServerError, FaultConflict: c.Conflict,
		FaultResetBefore: c.ResetBefore, FaultResetAfter: c.ResetAfter, FaultLatency: c.Latency,
		FaultKillDuring: c.KillDuring, FaultKillAfterAck: c.KillAfter}
	for _, k := range FaultKinds {
		if v := rates[k]; v < 0 || v > 1 {
			errs = append(errs, fmt.Errorf("chaos %s rate: %g, want 0 to 1", k, v))
		}
	}
	if s := c.Throttle + c.ServerError + c.Conflict + c.ResetBefore + c.ResetAfter + c.Latency; s > 1 {
		errs = append(errs, fmt.Errorf("chaos: request fault rates sum to %g, more than 1", s))
	}
	return errors.Join(errs...)
}

// chaos is the running fault injection: its random source and its counts.
type chaos struct {
	cfg    Chaos
	mu     sync.Mutex
	rng    *rand.Rand
	counts map[string]int
	down   map[string]bool // services in an outage (Cloud.Outage)
}

func newChaos(cfg Chaos) *chaos {
	if cfg.Seed == 0 {
		cfg.Seed = 1
	}
	if cfg.KillWindow <= 0 {
		cfg.KillWindow = 40 * time.Millisecond
	}
	if cfg.MaxLatency <= 0 {
		cfg.MaxLatency = 200 * time.Millisecond
	}
	return &chaos{cfg: cfg, rng: rand.New(rand.NewPCG(cfg.Seed, 0xc4a05)), counts: map[string]int{}, down: map[string]bool{}}
}

// float returns a random number in [0, 1); safe for concurrent use.
func (c *chaos) float() float64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.rng.Float64()
}

// duration returns a random duration in [0, d).
func (c *chaos) duration(d time.Duration) time.Duration {
	return time.Duration(c.float() * float64(d))
}

// pick chooses the fault of one proxied request, "" for none. conflictable says whether the
// request is a TransactWriteItems (the only one a TransactionConflict cancels); its share goes
// to no fault otherwise.
func (c *chaos) pick(conflictable bool) string {
	x := c.float()
	for _, f := range []struct {
		kind string
		rate float64
	}{{FaultThrottle, c.cfg.Throttle}, {FaultServerError, c.cfg.ServerError}, {FaultConflict, c.cfg.Conflict},
		{FaultResetBefore, c.cfg.ResetBefore}, {FaultResetAfter, c.cfg.ResetAfter}, {FaultLatency, c.cfg.Latency}} {
		if x < f.rate {
			if f.kind == FaultConflict && !conflictable {
				return ""
			}
			return f.kind
		}
		x -= f.rate
	}
	return ""
}

// count records one injected fault of kind.
func (c *chaos) count(kind string) {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.counts[kind]++
}

func (c *chaos) snapshot() map[string]int {
	if c == nil {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return maps.Clone(c.counts)
}

// setDown starts or ends an outage of service.
func (c *chaos) setDown(service string, down bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.down[service] = down
}

// isDown reports whether service is in an outage.
func (c *chaos) isDown(service string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.down[service]
}
