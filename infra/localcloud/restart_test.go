package localcloud_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/onceflow/onceflow/infra/localcloud"
	"github.com/onceflow/onceflow/pkg/testkit"
)

// An environment's restart that its invocation's context cut short (an API request past its
// timeout, under load) leaves no Runtime Interface Emulator behind: the next restart would
// replace it in the cloud's records, and nothing would stop it, not even Close. A chaos test's
// API environments were found running half an hour after their test had ended.
func TestEnvironment_a_restart_cut_short_leaves_no_process(t *testing.T) {
	testkit.SkipShort(t)
	t.Parallel()
	state := t.TempDir()
	cloud, err := localcloud.Start(t.Context(), localcloud.Config{
		Template: "testdata/one/template.yaml", StateDir: state, Prefix: fmt.Sprintf("rs%d", time.Now().UnixNano()),
		DynamoDBEndpoint: os.Getenv("DYNAMODB_ENDPOINT"), SQSEndpoint: os.Getenv("SQS_ENDPOINT"), Ungated: true,
		Install: true,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cloud.Close() })
	if err := cloud.Kill("Echo", 1); err != nil {
		t.Fatal(err)
	}
	// An invocation whose context is over: the pool may refuse it at once (it waits for an
	// environment or the context), or hand it the killed environment, whose restart the
	// context then cuts short. Until the latter has happened.
	done, cancel := context.WithCancel(context.Background())
	cancel()
	for restarts(cloud) == 0 {
		_, _ = cloud.Invoke(done, "Echo", []byte(`{}`))
	}
	if _, err := cloud.Invoke(t.Context(), "Echo", []byte(`{"pathParameters":{"id":"1"}}`)); err != nil {
		t.Fatalf("an invocation after the restart cut short: %v", err)
	}
	if got := emulators(state); len(got) != 1 {
		t.Errorf("%d Runtime Interface Emulators of the cloud's one environment:\n%s", len(got), strings.Join(got, "\n"))
	}
	if err := cloud.Close(); err != nil {
		t.Fatal(err)
	}
	if got := emulators(state); len(got) != 0 {
		t.Errorf("after Close, %d Runtime Interface Emulators still run:\n%s", len(got), strings.Join(got, "\n"))
	}
}

func restarts(c *localcloud.Cloud) int { return c.Stats().Functions["Echo"].Restarts }

// emulators returns the command lines of the live aws-lambda-rie processes that run a
// bootstrap of the cloud with state dir state.
func emulators(state string) []string {
	dirs, _ := filepath.Glob("/proc/[0-9]*")
	var out []string
	for _, d := range dirs {
		b, err := os.ReadFile(filepath.Join(d, "cmdline"))
		cmd := strings.ReplaceAll(string(b), "\x00", " ")
		if err == nil && strings.Contains(cmd, "aws-lambda-rie") && strings.Contains(cmd, state) {
			out = append(out, filepath.Base(d)+" "+cmd)
		}
	}
	return out
}
