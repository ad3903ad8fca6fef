package workload

import (
	"context"
	"strings"
	"testing"
	"time"
)

// clockedChecks answers each check with the next of answers (the last one again once they
// run out), each check taking step on clock: a drain check of a large run (it scans tables)
// that outlasts the deadline. The clock is the test's: no load can make a check take longer.
func clockedChecks(clock *time.Time, step time.Duration, answers ...string) func(context.Context) (string, error) {
	i := 0
	return func(context.Context) (string, error) {
		*clock = clock.Add(step)
		a := answers[min(i, len(answers)-1)]
		i++
		return a, nil
	}
}

// At 100,000 events one check of the drain took minutes: the first check that found nothing
// pending ended past the deadline and the run was reported "not drained after 10m0s: " with
// nothing named. A check that finds the pipeline drained is confirmed, deadline or not. (Its
// checks took 30 ms of real time against a 40 ms deadline once; on a loaded machine the first
// check alone outran the deadline: "not drained after 40ms: ledger lacks 3 records".)
func TestWaitDrained_confirms_a_drained_pipeline_found_past_the_deadline(t *testing.T) {
	clock := time.Unix(0, 0)
	now := func() time.Time { return clock }
	check := clockedChecks(&clock, 30*time.Second, "ledger lacks 3 records", "") // the second ends at 60 s, past the deadline
	if err := waitDrained(context.Background(), now, 40*time.Second, time.Millisecond, check); err != nil {
		t.Fatalf("waitDrained: %v, want nil: the pipeline was drained at the second check and the third confirmed it", err)
	}
}

// A pipeline that never drains is reported with what is still pending, never with nothing.
func TestWaitDrained_names_what_is_pending_when_it_gives_up(t *testing.T) {
	clock := time.Unix(0, 0)
	now := func() time.Time { return clock }
	check := clockedChecks(&clock, 5*time.Second, "", "ledger lacks 3 records")
	err := waitDrained(context.Background(), now, 30*time.Second, time.Millisecond, check)
	if err == nil || !strings.HasSuffix(err.Error(), ": ledger lacks 3 records") {
		t.Fatalf("waitDrained: %v, want an error naming what is pending", err)
	}
}

// The drills go on once every poisoned account has a movement held behind its bad message,
// once some has and the wait for the others is up, or once the traffic has ended; never with
// none held behind while the traffic goes on. At 100,000 events (1,000 accounts, one movement
// an account a minute) a fixed 20-second wait went on with none, and the drill proved nothing
// under traffic.
func TestTailsReady_waits_for_a_movement_held_behind_while_the_traffic_goes_on(t *testing.T) {
	cases := []struct {
		name                string
		held, want, tails   int
		ended, waitedEnough bool
		ready               bool
	}{
		{"not every account held yet", 2, 3, 2, false, true, false},
		{"every account has a tail", 3, 3, 3, false, false, true},
		{"some tail, the wait is up", 3, 3, 1, false, true, true},
		{"some tail, the wait goes on", 3, 3, 1, false, false, false},
		{"no tail, the wait is up, the traffic goes on", 3, 3, 0, false, true, false},
		{"no tail, the traffic ended", 3, 3, 0, true, false, true},
	}
	for _, c := range cases {
		if got := tailsReady(c.held, c.want, c.tails, c.ended, c.waitedEnough); got != c.ready {
			t.Errorf("%s: tailsReady = %v, want %v", c.name, got, c.ready)
		}
	}
}

// A chaos report says how long each phase took and measures the throughput over the requests
// phase, not over the drains that follow it.
func TestPrintChaos_gives_each_phase_and_the_throughput_of_the_requests_phase(t *testing.T) {
	r := &Report{Accepted: 1000, Duration: 200 * time.Second, Faults: map[string]int{},
		Phases: []Phase{{"requests", 50 * time.Second}, {"draining", 150 * time.Second}, {"verifying", 30 * time.Second}}}
	var b strings.Builder
	r.printChaos(&b)
	for _, want := range []string{"throughput: 1000 events accepted in 50s (the requests phase): 20.0 events/s",
		"phases: requests 50s · draining 2m30s · verifying 30s"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("the chaos report lacks %q:\n%s", want, b.String())
		}
	}
}

// The timeline gives each phase the time until the next began, in order.
func TestPhases_took_gives_each_phase_until_the_next(t *testing.T) {
	var p phases
	p.enter("requests")
	time.Sleep(150 * time.Millisecond)
	p.enter("draining")
	if got := p.current(); got != "draining" {
		t.Fatalf("current = %q, want draining", got)
	}
	took := p.took()
	if len(took) != 2 || took[0].Name != "requests" || took[0].Took < 100*time.Millisecond || took[1].Name != "draining" {
		t.Fatalf("took = %v, want requests (100 ms at least, rounded to 100 ms) then draining", took)
	}
}
