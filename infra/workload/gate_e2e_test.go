package workload_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/onceflow/onceflow/infra/workload"
	"github.com/onceflow/onceflow/infra/workload/workloadtest"
)

// ledgerRecords is the statement of the ledger's role on its records, counts and holds
// (template.yaml), and withoutHoldCheck the same without the dynamodb:ConditionCheckItem that
// lets its commits check their account's hold.
const (
	ledgerRecords = `            # every commit checks its account's hold, a hold's write and a count check the
            # event's record.
            - Effect: Allow
              Action: [dynamodb:PutItem, dynamodb:GetItem, dynamodb:UpdateItem, dynamodb:DeleteItem, dynamodb:ConditionCheckItem]
`
	withoutHoldCheck = `            # every commit checks its account's hold, a hold's write and a count check the
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
// HoldGroup needs): it fails, and says why with the action, the function and the table.
func TestRun_fails_naming_the_action_a_function_is_not_granted(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	cloud := workloadtest.Start(ctx, t, mutatedTemplate(t, ledgerRecords, withoutHoldCheck), "gate", nil)
	rep, err := workload.Run(ctx, cloud.Cloud, workload.Config{Notes: 2, Movements: 6, Accounts: 2, Malformed: -1,
		Receiver: cloud.Receiver, DrainTimeout: 15 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	rep.Print(&out)
	t.Log(out.String())
	if rep.OK() {
		t.Fatal("the workload passed every invariant with the ledger's ConditionCheckItem removed")
	}
	want := "LedgerFunction was refused dynamodb:ConditionCheckItem on arn:aws:dynamodb:us-east-1:000000000000:table/" +
		cloud.Endpoints().Tables["IdempotencyTable"].Name
	var denied *workload.Invariant
	for i, inv := range rep.Invariants {
		if strings.HasPrefix(inv.Name, "no call denied") {
			denied = &rep.Invariants[i]
		}
	}
	if denied == nil || denied.OK || !strings.Contains(denied.Detail, want) {
		t.Errorf("invariant %+v; want it failed, naming %q", denied, want)
	}
	if !strings.Contains(out.String(), "gatekeeper: ") || !strings.Contains(out.String(), want) {
		t.Error("the summary does not name the refusal")
	}
}
