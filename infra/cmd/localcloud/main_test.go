package main_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/onceflow/onceflow/infra/localcloud"

	"github.com/onceflow/onceflow/pkg/testkit"
)

func run(t *testing.T, bin string, args ...string) string {
	t.Helper()
	out, err := exec.Command(bin, args...).CombinedOutput()
	if err != nil {
		t.Fatalf("localcloud %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

func TestUpInvokeDown_stops_every_process_up_started(t *testing.T) {
	testkit.SkipShort(t) // it starts a local cloud of its own
	dir := t.TempDir()
	bin := filepath.Join(dir, "localcloud")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	state := filepath.Join(dir, "state")
	// Logs of an earlier run: one of an environment this run does not have, one it has.
	if err := os.MkdirAll(filepath.Join(state, "logs"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"SQSConsumer-9.log", "Echo-1.log"} {
		line := `{"timestamp":"2020-01-01T00:00:00Z","level":"INFO","message":"from an earlier run"}` + "\n"
		if err := os.WriteFile(filepath.Join(state, "logs", name), []byte(line), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	run(t, bin, "up", "-template", "../../localcloud/testdata/template.yaml", "-state", state,
		"-prefix", fmt.Sprintf("cli%d", time.Now().UnixNano()), "-envs", "SQSConsumer=3", "-shards", "2")
	s, err := localcloud.ReadState(state)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = localcloud.Down(state) })
	pids := []int{s.Supervisor}
	names := map[string]bool{}
	for _, p := range s.Processes {
		pids, names[p.Name] = append(pids, p.PID), true
	}
	for _, want := range []string{"dynamodb-local", "fauxqs", "kinesalite", "KinesisConsumer-2", "SQSConsumer-1", "SQSConsumer-3", "StreamConsumer-1", "StreamConsumer-2", "Echo-1"} {
		if !names[want] {
			t.Errorf("state has no process %s: %+v", want, s.Processes)
		}
	}
	for _, pid := range pids {
		if pid <= 0 || syscall.Kill(pid, 0) != nil {
			t.Fatalf("pid %d of %+v is not running after up", pid, s)
		}
	}

	event := filepath.Join(dir, "event.json")
	if err := os.WriteFile(event, []byte(`{"rawPath":"/echo/1","pathParameters":{"id":"1"}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if out := run(t, bin, "invoke", "-state", state, "echo", event); !strings.Contains(out, `"statusCode":201`) {
		t.Errorf("invoke echo: %s", out)
	}
	if out, err := exec.Command(bin, "invoke", "-state", state, "echo").CombinedOutput(); err == nil ||
		!strings.Contains(string(out), "usage: localcloud invoke FUNCTION EVENT.json") {
		t.Errorf("invoke without an event: %v\n%s", err, out)
	}
	if _, err := os.Stat(filepath.Join(state, "logs", "SQSConsumer-9.log")); !os.IsNotExist(err) {
		t.Errorf("an earlier run's environment log is left: %v", err)
	}
	logs := run(t, bin, "logs", "-state", state, "echo")
	if !strings.Contains(logs, "INFO  Echo-1  echo request id=1 path=/echo/1") || strings.Contains(logs, "earlier run") ||
		strings.Contains(logs, "(rapid)") || strings.Contains(logs, "RequestId") {
		t.Errorf("logs echo: want this run's echo request line alone, got:\n%s", logs)
	}
	if out, err := exec.Command(bin, "logs", "-state", state, "nope").CombinedOutput(); err == nil ||
		!strings.Contains(string(out), `no function "nope"; functions: Echo, KinesisConsumer, SQSConsumer, StreamConsumer`) {
		t.Errorf("logs of an unknown function: %v\n%s", err, out)
	}

	if out := run(t, bin, "queue", "-state", state); !strings.Contains(out, "NotesQueue") || !strings.Contains(out, "visible") {
		t.Errorf("queue: want every queue with its counts, got:\n%s", out)
	}
	if out := run(t, bin, "send", "-state", state, "-group", "g-1", "NotesQueue", "{not json"); !strings.Contains(out, "sent message ") ||
		!strings.Contains(out, "to NotesQueue in group g-1 (9 bytes)") {
		t.Errorf("send: want the message id, the queue and the group, got:\n%s", out)
	}
	if out, err := exec.Command(bin, "send", "-state", state, "NoSuchQueue", "x").CombinedOutput(); err == nil || !strings.Contains(string(out), `no queue "NoSuchQueue"; queues: [`) {
		t.Errorf("send to an unknown queue: %v\n%s", err, out)
	}
	if out := run(t, bin, "scan", "-state", state); !strings.Contains(out, "items") {
		t.Errorf("scan: want every table with its count, got:\n%s", out)
	}

	if out := run(t, bin, "down", "-state", state); !strings.Contains(out, "down: stopped ") || !strings.Contains(out, "dynamodb-local (pid ") {
		t.Errorf("down: want what it stopped, got:\n%s", out)
	}
	for _, pid := range pids {
		if err := syscall.Kill(pid, 0); err == nil && !zombie(pid) {
			t.Errorf("pid %d still running after down", pid)
		}
	}
	if _, err := os.Stat(filepath.Join(state, "endpoints.json")); !os.IsNotExist(err) {
		t.Errorf("endpoints.json left after down: %v", err)
	}
}

func zombie(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return true
	}
	i := strings.LastIndexByte(string(b), ')')
	return i > 0 && i+2 < len(b) && b[i+2] == 'Z'
}

var built struct {
	once sync.Once
	bin  string
	err  error
	out  []byte
}

// buildCLI builds the command once per test binary.
func buildCLI(t *testing.T) string {
	t.Helper()
	built.once.Do(func() {
		dir, err := os.MkdirTemp("", "localcloud-cli-")
		if err != nil {
			built.err = err
			return
		}
		built.bin = filepath.Join(dir, "localcloud")
		built.out, built.err = exec.Command("go", "build", "-o", built.bin, ".").CombinedOutput()
	})
	if built.err != nil {
		t.Fatalf("build: %v\n%s", built.err, built.out)
	}
	return built.bin
}

func itoa(n int) string { return strconv.Itoa(n) }

// waitZombie waits until pid, a child that exited unreaped, shows state Z.
func waitZombie(t *testing.T, pid int) {
	t.Helper()
	for range 100 {
		if zombie(pid) {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("pid %d did not become a zombie", pid)
}
