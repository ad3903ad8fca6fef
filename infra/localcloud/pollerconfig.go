package localcloud

import (
	"fmt"
	"strconv"
)

// invokesPerPoller is how many concurrent invocations one provisioned SQS event poller runs
// at most, as Lambda documents its provisioned mode.
const invokesPerPoller = 10

// checkPollers refuses a ProvisionedPollerConfig that Lambda refuses: on an SQS mapping only
// here, never beside ScalingConfig.MaximumConcurrency, with 2 to 200 minimum and up to 2,000
// maximum pollers, the minimum not above the maximum.
func checkPollers(typ string, maxConcurrency, min, max int) error {
	switch {
	case typ != EventSQS:
		return fmt.Errorf("ProvisionedPollerConfig: the local cloud emulates provisioned mode on SQS event sources only")
	case maxConcurrency > 0:
		return fmt.Errorf("ProvisionedPollerConfig cannot be combined with ScalingConfig.MaximumConcurrency (Lambda refuses the mapping): pick one")
	case min < 2 || min > 200:
		return fmt.Errorf("ProvisionedPollerConfig.MinimumPollers %d: want 2 to 200", min)
	case max < 2 || max > 2000 || max < min:
		return fmt.Errorf("ProvisionedPollerConfig.MaximumPollers %d: want %d to 2000", max, min)
	}
	return nil
}

// pollerConcurrency is how many invocations of an SQS mapping run at once locally: the
// function's execution environments, capped by MaximumConcurrency in on-demand mode or by
// what MaximumPollers provisioned pollers can run.
func pollerConcurrency(ev Event, environments int) int {
	switch {
	case ev.MaxPollers > 0:
		return min(environments, ev.MaxPollers*invokesPerPoller)
	case ev.MaxConcurrency > 0:
		return min(environments, ev.MaxConcurrency)
	}
	return environments
}

// pollers reads ProvisionedPollerConfig's two counts, numbers or (from parameters) strings.
func pollers(min, max any) (int, int, error) {
	var out [2]int
	for i, v := range []any{min, max} {
		if v == nil {
			return 0, 0, fmt.Errorf("ProvisionedPollerConfig: set both MinimumPollers and MaximumPollers")
		}
		n, err := strconv.Atoi(fmt.Sprint(v))
		if err != nil {
			return 0, 0, fmt.Errorf("ProvisionedPollerConfig: %v is not a number of pollers", v)
		}
		out[i] = n
	}
	return out[0], out[1], nil
}

// scaling reads an event source's batching window and provisioned pollers, refusing poller
// settings Lambda refuses. The batching window is compared with the translation but not
// emulated: batches go as records come, which the log says once at start.
func (c *Cloud) scaling(ev *Event, p map[string]any) error {
	var opts struct {
		MaximumBatchingWindowInSeconds int
		ProvisionedPollerConfig        *struct{ MinimumPollers, MaximumPollers any } // numbers, or parameters' strings
	}
	if err := remarshal(p, &opts); err != nil {
		return err
	}
	ev.BatchingWindow = opts.MaximumBatchingWindowInSeconds
	if ev.BatchingWindow > 0 {
		c.log.Info("event source setting read but not emulated locally: batches go as records come",
			"event", ev.Name, "MaximumBatchingWindowInSeconds", ev.BatchingWindow)
	}
	if pc := opts.ProvisionedPollerConfig; pc != nil {
		var err error
		if ev.MinPollers, ev.MaxPollers, err = pollers(pc.MinimumPollers, pc.MaximumPollers); err != nil {
			return err
		}
		return checkPollers(ev.Type, ev.MaxConcurrency, ev.MinPollers, ev.MaxPollers)
	}
	return nil
}
