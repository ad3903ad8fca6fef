package workload_test

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/onceflow/onceflow/infra/workload"
	"github.com/onceflow/onceflow/infra/workload/workloadtest"
)

// ledgerRecords is the statement of the ledger's role on its records, counts and holds
// (template.yaml), and withoutHoldCheck the same without the dynamodb:ConditionCheckItem that
// lets its commits check their account's hold.
const (
	ledgerRecords = `            # every commit checks its group's hold, a hold's write and a count check the
            # event's record.
            - Effect: Allow
              Action: [dynamodb:PutItem, dynamodb:GetItem, dynamodb:UpdateItem, dynamodb:DeleteItem, dynamodb:ConditionCheckItem]
`
	withoutHoldCheck = `            # every commit checks its group's hold, a hold's write and a count check the
            # event's record.
            - Effect: Allow
              Action: [dynamodb:PutItem, dynamodb:GetItem, dynamodb:UpdateItem, dynamodb:DeleteItem]
`
)

// mutatedTemplate writes template.yaml with old replaced by new into a new directory, its
// functions' CodeUri still the module root, and returns the file.
func mutatedTemplate(t *testing.T, old, new string) string {
	t.Helper()
	raw, err := os.ReadFile(template)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(raw), old) {
		t.Fatalf("%s no longer has %q to remove", template, old)
	}
	dir := t.TempDir()
	root, err := filepath.Abs(filepath.Dir(template))
	if err != nil {
		t.Fatal(err)
	}
	rel, err := filepath.Rel(dir, root)
	if err != nil {
		t.Fatal(err)
	}
	text := strings.ReplaceAll(strings.Replace(string(raw), old, new, 1), "      CodeUri: .\n", "      CodeUri: "+rel+"\n")
	path := filepath.Join(dir, "template.yaml")
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// The workload of `make run`, small, on template.yaml with one action removed from a
// function's policy (the ledger's dynamodb:ConditionCheckItem, which every commit under
// HoldGroup needs): the progress lines show the refusal as it happens, and the run stops within
// a minute of it, naming the function, the action, the table and the statement that came
// closest, rather than waiting for a pipeline that cannot drain.
func TestRun_stops_at_the_first_call_a_function_is_not_granted_naming_it(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	cloud := workloadtest.Start(ctx, t, mutatedTemplate(t, ledgerRecords, withoutHoldCheck), "gate", nil)
	var progress strings.Builder
	rep, err := workload.Run(ctx, cloud.Cloud, workload.Config{Notes: 2, Movements: 6, Accounts: 2, Malformed: -1,
		Receiver: cloud.Receiver, StopOnDenial: true, Progress: &syncWriter{w: &progress}, ProgressEvery: time.Second})
	stopped := time.Now()
	t.Log(progress.String())
	var denied *workload.DeniedError
	if !errors.As(err, &denied) {
		t.Fatalf("Run: report %v, err %v; want it stopped with a *DeniedError", rep != nil, err)
	}
	d := denied.Denial
	table := "arn:aws:dynamodb:us-east-1:000000000000:table/" + cloud.Endpoints().Tables["IdempotencyTable"].Name
	if d.Principal != "LedgerFunction" || d.Action != "dynamodb:ConditionCheckItem" || d.Resource != table ||
		!strings.Contains(d.Closest, "LedgerFunctionRolePolicy0") || !strings.Contains(d.Why, "do not include dynamodb:ConditionCheckItem") {
		t.Errorf("denial %+v; want LedgerFunction's dynamodb:ConditionCheckItem on %s, its records' statement the closest", d, table)
	}
	if took := stopped.Sub(d.At); took > time.Minute {
		t.Errorf("the run stopped %s after the refusal; want within a minute", took)
	} else {
		t.Logf("the run stopped %s after the refusal", took.Round(100*time.Millisecond))
	}
	if !strings.Contains(err.Error(), "LedgerFunction was refused dynamodb:ConditionCheckItem on "+table) {
		t.Errorf("error %q; want it to name the refusal", err)
	}
	if !strings.Contains(progress.String(), "DENIED LedgerFunction was refused dynamodb:ConditionCheckItem") {
		t.Error("the progress lines did not show the refusal")
	}
}

// syncWriter is a writer safe for the progress goroutine and the test.
type syncWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (s *syncWriter) Write(b []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.Write(b)
}
