package workload_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/onceflow/onceflow/infra/localcloud"
	"github.com/onceflow/onceflow/infra/workload"
	"github.com/onceflow/onceflow/infra/workload/workloadtest"
)

// The end-to-end test: the application of template.yaml on the local cloud (the emulators of
// `make test` when DYNAMODB_ENDPOINT and SQS_ENDPOINT are set), a small workload with retries,
// re-sends, malformed messages and a crash after commit, and every invariant checked.
func TestRun_small_workload_through_the_real_pipeline_keeps_every_invariant(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute) // 45 s alone; it shares the machine with the other e2e tests
	defer cancel()
	crash := &workload.Crash{Function: "LedgerFunction", After: 3}
	cloud := workloadtest.Start(ctx, t, template, "e2e", func(cfg *localcloud.Config) {
		cfg.CrashAfterInvoke = crash.Hook
		cfg.StreamShards = 4 // as AWS splits a stream: per-account order must survive it
	})

	rep, err := workload.Run(ctx, cloud.Cloud, workload.Config{Notes: 20, Movements: 100, Accounts: 5,
		Receiver: cloud.Receiver, Crash: crash, DrainTimeout: 3 * time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	rep.Print(&out)
	t.Log(out.String())

	if !rep.OK() {
		t.Error("an invariant failed (see the summary above)")
	}
	// The faults were really injected and really seen.
	dups, dead, recs := 0, 0, 0
	for _, c := range rep.Consumers {
		dups += c.Duplicates
		dead += c.DLQDepth
		recs += c.Records
	}
	positive := len(rep.Commits) > 0
	for _, c := range rep.Commits {
		if c.Latency() <= 0 {
			positive = false
			t.Logf("commit %+v: latency %s", c, c.Latency())
		}
	}
	checks := []struct {
		want string
		ok   bool
	}{
		{"requests were retried", rep.Retries > 0},
		{"events were re-sent", rep.Resent > 0 && rep.ResentMsgs >= rep.Resent},
		{"every repeated send was deduplicated by the broker", rep.BrokerDedup == rep.ResentMsgs},
		{"the crash fired", crash.Fired()},
		{"re-sends and the crashed batch came back as consumer duplicates", dups > rep.ResentMsgs},
		{"the dead-letter queues hold the malformed messages", rep.Malformed > 0 && dead == rep.Malformed},
		{"every function's peak memory was measured, within its MemorySize", measuredWithin(rep.Memory)},
		{"every record gave a commit time, after its event's acceptance", len(rep.Commits) == recs && positive},
	}
	for _, c := range checks {
		if !c.ok {
			t.Errorf("want: %s", c.want)
		}
	}
	t.Run("every access rule answers 401, 403 or the route", func(t *testing.T) { checkAccessRules(t, cloud.Endpoints()) })
	t.Run("a note and a movement made with tokens flow end to end", func(t *testing.T) { checkFlowWithTokens(t, cloud.Endpoints()) })
	t.Run("a trace header travels from an API request to its consumers' log lines", func(t *testing.T) { checkTraces(t, cloud.Cloud) })
}

func measuredWithin(mem []workload.FunctionMemory) bool {
	for _, m := range mem {
		if m.PeakRSSKiB <= 0 || m.MemorySize <= 0 || m.PeakRSSKiB > m.MemorySize*1024 {
			return false
		}
	}
	return len(mem) > 0
}

// template is the repository's template.yaml, from this package's directory.
var template = filepath.Join("..", "..", "template.yaml")
