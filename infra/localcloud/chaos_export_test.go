package localcloud

import "net/http"

// NewFaultProxy returns the fault-injecting proxy for service ("dynamodb" or "sqs") in front
// of the emulator at target, and its counts by fault kind.
func NewFaultProxy(service, target string, cfg Chaos) (http.Handler, func() map[string]int) {
	c := newChaos(cfg)
	return newFaultProxy(service, target, c), c.snapshot
}
