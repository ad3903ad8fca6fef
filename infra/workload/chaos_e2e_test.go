package workload_test

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/onceflow/onceflow/infra/localcloud"
	"github.com/onceflow/onceflow/infra/workload"
)

// The CI-sized chaos run (`make chaos` at a small size, higher fault rates): every fault kind
// is injected between the functions and the emulators, environments are killed during and
// after invocations, the dead-letter queues are redriven, and every invariant of make run
// still holds.
func TestChaos_small_run_with_every_fault_kind_keeps_every_invariant(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	recv, err := workload.NewReceiver(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer recv.Close()
	state, err := os.MkdirTemp("", "onceflow-chaos-")
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if t.Failed() {
			t.Logf("logs of every process kept in %s", filepath.Join(state, "logs"))
			return
		}
		_ = os.RemoveAll(state)
	}()
	if err := os.MkdirAll(filepath.Join(state, "logs"), 0o755); err != nil {
		t.Fatal(err)
	}
	logf, err := os.Create(filepath.Join(state, "logs", "localcloud.log"))
	if err != nil {
		t.Fatal(err)
	}
	defer logf.Close()
	cfg := localcloud.Config{
		Logger:            slog.New(slog.NewTextHandler(logf, nil)),
		StateDir:          state,
		Prefix:            fmt.Sprintf("chaos%d", time.Now().UnixNano()),
		DynamoDBEndpoint:  os.Getenv("DYNAMODB_ENDPOINT"),
		SQSEndpoint:       os.Getenv("SQS_ENDPOINT"),
		Install:           true,
		VisibilityTimeout: 5,
		Chaos: localcloud.Chaos{Throttle: 0.03, ServerError: 0.03, Conflict: 0.05, ResetBefore: 0.03, ResetAfter: 0.03,
			Latency: 0.03, MaxLatency: 100 * time.Millisecond, KillDuring: 0.05, KillAfter: 0.03},
	}
	if err := workload.ServeWebhookParameters(&cfg, filepath.Join("..", "..", "template.yaml"), recv); err != nil {
		t.Fatal(err)
	}
	cloud, err := localcloud.Start(ctx, cfg)
	if err != nil {
		t.Fatalf("start the local cloud (run the tests with `make test`, which installs and starts what they need): %v", err)
	}
	defer func() {
		if err := cloud.Close(); err != nil {
			t.Errorf("close the local cloud: %v", err)
		}
	}()

	rep, err := workload.Run(ctx, cloud, workload.Config{Notes: 100, Movements: 400, Accounts: 20,
		Receiver: recv, Redrive: true, DrainTimeout: 3 * time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	rep.Print(&out)
	t.Log(out.String())
	if !rep.OK() {
		t.Error("an invariant failed under chaos (see the summary above)")
	}
	if below := rep.FaultsBelow(5); len(below) > 0 {
		t.Errorf("fault kinds injected fewer than 5 times: %v", below)
	}
}
