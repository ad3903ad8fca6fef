// Package workloadtest starts the local cloud of template.yaml for a test, on the emulators of
// `make test`, with the webhook receiver its notifier calls. Only tests import it.
package workloadtest

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/onceflow/onceflow/infra/localcloud"
	"github.com/onceflow/onceflow/infra/workload"
	"github.com/onceflow/onceflow/internal/webhooktest"
)

// Cloud is a local cloud started for one test.
type Cloud struct {
	*localcloud.Cloud
	// State is the cloud's state directory (endpoints.json, logs/, build/).
	State string
	// Receiver receives the webhook calls of the notifier.
	Receiver *webhooktest.Receiver
}

// Start starts the local cloud of the template at path on the emulators at DYNAMODB_ENDPOINT
// and SQS_ENDPOINT, its resources named prefix plus a unique number, the webhook parameters
// served by a new receiver, and set (if not nil) adjusting the configuration. When the test
// ends the cloud and the receiver are closed and the state directory is removed, unless the
// test failed: then the logs of every process are kept, and where is logged.
func Start(ctx context.Context, t testing.TB, template, prefix string, set func(*localcloud.Config)) Cloud {
	t.Helper()
	recv, err := workload.NewReceiver(nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { recv.Close() })
	state := stateDir(t, prefix)
	logf, err := os.Create(filepath.Join(state, "logs", "localcloud.log"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { logf.Close() })
	cfg := localcloud.Config{
		Template:          template,
		Logger:            slog.New(slog.NewTextHandler(logf, nil)),
		StateDir:          state,
		Prefix:            fmt.Sprintf("%s%d", prefix, time.Now().UnixNano()),
		DynamoDBEndpoint:  os.Getenv("DYNAMODB_ENDPOINT"),
		SQSEndpoint:       os.Getenv("SQS_ENDPOINT"),
		Install:           true,
		VisibilityTimeout: 5,
	}
	if set != nil {
		set(&cfg)
	}
	if err := workload.ServeWebhookParameters(&cfg, template, recv); err != nil {
		t.Fatal(err)
	}
	cloud, err := localcloud.Start(ctx, cfg)
	if err != nil {
		t.Fatalf("start the local cloud (run the tests with `make test`, which installs and starts what they need): %v", err)
	}
	t.Cleanup(func() {
		if err := cloud.Close(); err != nil {
			t.Errorf("close the local cloud: %v", err)
		}
	})
	return Cloud{Cloud: cloud, State: state, Receiver: recv}
}

// stateDir makes a state directory with its logs/, removed when the test ends unless it failed.
func stateDir(t testing.TB, prefix string) string {
	t.Helper()
	state, err := os.MkdirTemp("", "onceflow-"+prefix+"-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("logs of every process kept in %s", filepath.Join(state, "logs"))
			return
		}
		_ = os.RemoveAll(state)
	})
	if err := os.MkdirAll(filepath.Join(state, "logs"), 0o755); err != nil {
		t.Fatal(err)
	}
	return state
}

// CLI builds the operator's CLI (cmd/onceflow) for the test, as `make ops` builds it, and
// returns the binary's path.
func CLI(t testing.TB) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "onceflow")
	out, err := exec.Command("go", "build", "-o", bin, "github.com/onceflow/onceflow/cmd/onceflow").CombinedOutput()
	if err != nil {
		t.Fatalf("build the operator's CLI: %v\n%s", err, out)
	}
	return bin
}
