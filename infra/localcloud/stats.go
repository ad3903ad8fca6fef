package localcloud

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"

	"github.com/onceflow/onceflow/infra/gatekeeper"
)

// Stats counts what the local cloud did since Start, for summaries and assertions.
type Stats struct {
	// Functions by logical id.
	Functions map[string]FunctionStats `json:"functions"`
	// Mappings by "<Function>/<Event name>", for SQS and DynamoDB event sources.
	Mappings map[string]MappingStats `json:"mappings"`
	// Faults counts the faults injected under Config.Chaos by kind (FaultKinds), nil without.
	Faults map[string]int `json:"faults,omitempty"`
	// Access counts the calls the gatekeeper authorised and denied, nil with Config.Ungated.
	Access *gatekeeper.Stats `json:"access,omitempty"`
}

// FunctionStats counts invocations of one function.
type FunctionStats struct {
	Invocations int `json:"invocations"`
	Failed      int `json:"failed"`   // function errors, timeouts and crashes
	Restarts    int `json:"restarts"` // environments restarted after a crash or a kill
	// PeakRSSKiB is the largest peak resident set size (VmHWM) of any of the function's
	// bootstrap processes, read after each invocation: what its MemorySize must hold.
	PeakRSSKiB int `json:"peakRssKiB"`
}

// MappingStats counts the work of one event source mapping.
type MappingStats struct {
	Batches       int `json:"batches"`       // invocations made
	Records       int `json:"records"`       // messages or stream records delivered, redeliveries included
	Succeeded     int `json:"succeeded"`     // deleted (SQS) or passed (streams)
	Filtered      int `json:"filtered"`      // dropped by FilterCriteria (and deleted, for SQS)
	Discarded     int `json:"discarded"`     // stream records given up (MaximumRetryAttempts, MaximumRecordAgeInSeconds)
	ItemFailures  int `json:"itemFailures"`  // records reported in batchItemFailures
	FailedBatches int `json:"failedBatches"` // invocations that failed as a whole
	LargestBatch  int `json:"largestBatch"`  // most records delivered in one invocation
}

// counters is the mutable form of Stats.
type counters struct {
	mu sync.Mutex
	s  Stats
}

func (c *counters) function(id string, f func(*FunctionStats)) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.s.Functions == nil {
		c.s.Functions = map[string]FunctionStats{}
	}
	v := c.s.Functions[id]
	f(&v)
	c.s.Functions[id] = v
}

func (c *counters) mapping(key string, f func(*MappingStats)) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.s.Mappings == nil {
		c.s.Mappings = map[string]MappingStats{}
	}
	v := c.s.Mappings[key]
	f(&v)
	c.s.Mappings[key] = v
}

func (c *counters) snapshot() Stats {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := Stats{Functions: map[string]FunctionStats{}, Mappings: map[string]MappingStats{}}
	for k, v := range c.s.Functions {
		out.Functions[k] = v
	}
	for k, v := range c.s.Mappings {
		out.Mappings[k] = v
	}
	return out
}

// ReadStats returns what the running cloud at e has done so far, from its Lambda API
// (GET LambdaURL + "/localcloud/stats"): what another process (make invoke) reads of a cloud
// that make up started.
func (e Endpoints) ReadStats(ctx context.Context) (Stats, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimSuffix(e.LambdaURL, "/")+"/localcloud/stats", nil)
	if err != nil {
		return Stats{}, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return Stats{}, fmt.Errorf("local cloud stats: %w", err)
	}
	defer resp.Body.Close()
	var s Stats
	if resp.StatusCode != http.StatusOK {
		return s, fmt.Errorf("local cloud stats: %s", resp.Status)
	}
	if err := json.NewDecoder(resp.Body).Decode(&s); err != nil {
		return s, fmt.Errorf("local cloud stats: %w", err)
	}
	return s, nil
}
