package onceflow_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"

	"github.com/onceflow/onceflow/infra/localcloud"
)

// make consumer's part of the template, spliced into a copy of template.yaml, passes the check
// of every consumer's part, and its dashboard still parses; a second run with the same name is
// refused and leaves the files as they were. (A name no guide uses, so that the test passes in
// a clone that followed docs/consumer.md.)
func TestMakeConsumer_writes_a_part_every_consumer_check_accepts(t *testing.T) {
	root := t.TempDir()
	tpl, err := os.ReadFile("template.yaml")
	if err != nil {
		t.Fatal(err)
	}
	samples, _ := filepath.Glob("events/*-batch.json")
	if err := os.MkdirAll(filepath.Join(root, "events"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, p := range samples {
		b, _ := os.ReadFile(p)
		_ = os.WriteFile(filepath.Join(root, p), b, 0o644)
	}
	_ = os.WriteFile(filepath.Join(root, "template.yaml"), tpl, 0o644)
	scaffold := func() ([]byte, error) {
		return exec.Command(goTool(t), "run", "./cmd/newconsumer", "-name", "scaffold-check", "-type", "note.created,note.archived", "-dir", root).CombinedOutput()
	}
	if out, err := scaffold(); err != nil {
		t.Fatalf("newconsumer: %v\n%s", err, out)
	}
	for _, f := range []string{"internal/scaffoldcheck/scaffoldcheck.go", "internal/scaffoldcheck/scaffoldcheck_test.go", "functions/scaffold-check/main.go", "events/scaffold-check-batch.json"} {
		if _, err := os.Stat(filepath.Join(root, f)); err != nil {
			t.Errorf("no %s: %v", f, err)
		}
	}
	got, err := localcloud.LoadDocument(filepath.Join(root, "template.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	problems := consumerProblems(t, got)
	for id, ps := range problems {
		for _, p := range ps {
			t.Errorf("%s: %s", id, p)
		}
	}
	if !slices.Contains(sqsConsumers(got), "ScaffoldCheckFunction") {
		t.Fatalf("consumers %v; want ScaffoldCheckFunction among them", sqsConsumers(got))
	}
	if r := relayRoutes(t, got); !slices.Contains(r["note.created"], "ScaffoldCheckQueue") || !slices.Equal(r["note.archived"], []string{"ScaffoldCheckQueue"}) {
		t.Errorf("relay routes %v; want note.created and note.archived to ScaffoldCheckQueue too", r)
	}
	body, _ := get(got, "Resources", "Dashboard", "Properties", "DashboardBody", "Fn::Sub").(string)
	if !json.Valid([]byte(body)) {
		t.Errorf("the dashboard's body is no longer JSON:\n%s", body)
	}
	before, _ := os.ReadFile(filepath.Join(root, "template.yaml"))
	if out, err := scaffold(); err == nil {
		t.Errorf("a second newconsumer with the same name succeeded:\n%s", out)
	}
	if after, _ := os.ReadFile(filepath.Join(root, "template.yaml")); string(after) != string(before) {
		t.Error("the refused second run changed template.yaml")
	}
}
