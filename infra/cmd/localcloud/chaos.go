package main

import (
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/onceflow/onceflow/infra/localcloud"
	"github.com/onceflow/onceflow/infra/workload"
)

// chaosCmd is `make chaos`: the run workload at scale (-events) with faults injected between
// every function and DynamoDB/SQS, environments killed during and after invocations, and
// each dead-letter queue redriven near the end; the invariants of run, and the faults by kind.
func chaosCmd(args []string) error { return runWith("chaos", args) }

// chaosFlags are the flags chaos adds to run's.
type chaosFlags struct {
	events int
	poison int
	cli    string
	chaos  localcloud.Chaos
}

// The default rates make every kind happen well over a hundred times in a default run
// (EVENTS=20000); see docs/chaos.md.
func newChaosFlags(fs *flag.FlagSet) *chaosFlags {
	c := &chaosFlags{}
	fs.IntVar(&c.events, "events", 20000, "events (API requests accepted): a fifth notes, the rest credits/debits")
	fs.IntVar(&c.poison, "poison", 3, "accounts poisoned mid-run with a producer's bad message, then recovered by the runbook with the CLI (0: no drill)")
	fs.StringVar(&c.cli, "cli", ".local/bin/onceflow", "the operator's CLI the drill runs (make chaos builds it, as make ops does)")
	fs.Float64Var(&c.chaos.Throttle, "throttle", 0.005, "share of function→DynamoDB/SQS requests throttled")
	fs.Float64Var(&c.chaos.ServerError, "server-error", 0.005, "share answered 500 InternalServerError")
	fs.Float64Var(&c.chaos.Conflict, "conflict", 0.01, "share of TransactWriteItems cancelled with TransactionConflict")
	fs.Float64Var(&c.chaos.ResetBefore, "reset-before", 0.005, "share whose connection is reset before forwarding")
	fs.Float64Var(&c.chaos.ResetAfter, "reset-after", 0.005, "share whose connection is reset after the emulator answered")
	fs.Float64Var(&c.chaos.Latency, "latency", 0.01, "share held back up to -max-latency")
	fs.DurationVar(&c.chaos.MaxLatency, "max-latency", 200*time.Millisecond, "largest latency added")
	fs.Float64Var(&c.chaos.KillDuring, "kill-during", 0.02, "share of invocations whose environment is killed within the first 40 ms")
	fs.Float64Var(&c.chaos.KillAfter, "kill-after", 0.01, "share of successful invocations whose environment is killed after it returned")
	fs.Uint64Var(&c.chaos.Seed, "chaos-seed", 1, "seed of the fault choices")
	return c
}

// apply sizes wl from -events unless -notes, -movements or -accounts were given, turns the
// redrive and the recovery drill on, and returns the crash function of run (none: chaos kills at random instead).
func (c *chaosFlags) apply(wl *workload.Config, fs *flag.FlagSet) string {
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	if !set["notes"] && !set["movements"] {
		wl.Notes = c.events / 5
		wl.Movements = c.events - wl.Notes
	}
	if !set["accounts"] {
		wl.Accounts = max(50, c.events/100)
	}
	wl.Redrive = true
	wl.Poison, wl.CLI = c.poison, c.cli
	wl.DrainTimeout = 10 * time.Minute
	fmt.Fprintf(os.Stdout, "chaos: %+v\n", c.chaos)
	return ""
}
