package onceflow_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/onceflow/onceflow/infra/localcloud"
)

// make consumer's part of the template, spliced into a copy of template.yaml, passes the check
// of every consumer's part, and its dashboard still parses; a second run with the same name is
// refused and leaves the files as they were. (A name no guide uses, so that the test passes in
// a clone that followed docs/consumer.md.)
func TestMakeConsumer_writes_a_part_every_consumer_check_accepts(t *testing.T) {
	root := scaffoldRoot(t)
	scaffold := func() ([]byte, error) {
		return newconsumer(t, "-name", "scaffold-check", "-type", "note.created,note.archived", "-new-type", "-dir", root)
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

// scaffoldRoot is a directory with a copy of template.yaml and the sample batches, where
// cmd/newconsumer may write.
func scaffoldRoot(t *testing.T) string {
	t.Helper()
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
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(root, p), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(root, "template.yaml"), tpl, 0o644); err != nil {
		t.Fatal(err)
	}
	return root
}

func newconsumer(t *testing.T, args ...string) ([]byte, error) {
	t.Helper()
	return exec.Command(goTool(t), append([]string{"run", "./cmd/newconsumer"}, args...)...).CombinedOutput()
}

// A typo in TYPE (note.crated) would write a consumer of an event nobody publishes: refused,
// naming the types the relay routes, and nothing written.
func TestMakeConsumer_refuses_an_event_type_no_producer_publishes(t *testing.T) {
	root := scaffoldRoot(t)
	before, _ := os.ReadFile(filepath.Join(root, "template.yaml"))
	out, err := newconsumer(t, "-name", "typo-check", "-type", "note.crated", "-dir", root)
	if err == nil {
		t.Fatalf("newconsumer accepted note.crated:\n%s", out)
	}
	for _, want := range []string{`"note.crated"`, "no producer publishes it", "note.created", "account.credited", "-new-type"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("output does not say %q:\n%s", want, out)
		}
	}
	if after, _ := os.ReadFile(filepath.Join(root, "template.yaml")); string(after) != string(before) {
		t.Error("the refused run changed template.yaml")
	}
	if _, err := os.Stat(filepath.Join(root, "internal", "typocheck")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the refused run wrote internal/typocheck (%v)", err)
	}
}

// make remove-consumer undoes make consumer: the template as it was, byte for byte, and none
// of the consumer's files; a consumer make consumer did not write (the ledger) is refused.
func TestMakeConsumer_remove_takes_out_exactly_what_it_wrote(t *testing.T) {
	root := scaffoldRoot(t)
	before, _ := os.ReadFile(filepath.Join(root, "template.yaml"))
	if out, err := newconsumer(t, "-name", "remove-check", "-type", "note.created", "-dir", root); err != nil {
		t.Fatalf("newconsumer: %v\n%s", err, out)
	}
	out, err := newconsumer(t, "-remove", "-name", "remove-check", "-dir", root)
	if err != nil {
		t.Fatalf("newconsumer -remove: %v\n%s", err, out)
	}
	after, _ := os.ReadFile(filepath.Join(root, "template.yaml"))
	if string(after) != string(before) {
		t.Errorf("template.yaml after scaffold and remove differs from before:\n%s", lineDiff(string(before), string(after)))
	}
	for _, p := range []string{"internal/removecheck", "functions/remove-check", "events/remove-check-batch.json"} {
		if _, err := os.Stat(filepath.Join(root, p)); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s is still there (%v)", p, err)
		}
		if !strings.Contains(string(out), p) {
			t.Errorf("the output does not name %s:\n%s", p, out)
		}
	}
	if out, err := newconsumer(t, "-remove", "-name", "ledger", "-dir", root); err == nil || !strings.Contains(string(out), "only a consumer make consumer wrote") {
		t.Errorf("removing the ledger: %v\n%s; want a refusal", err, out)
	}
	if again, _ := os.ReadFile(filepath.Join(root, "template.yaml")); string(again) != string(before) {
		t.Error("the refused removal changed template.yaml")
	}
}

// lineDiff names the first line where a and b differ.
func lineDiff(a, b string) string {
	al, bl := strings.Split(a, "\n"), strings.Split(b, "\n")
	for i := 0; i < min(len(al), len(bl)); i++ {
		if al[i] != bl[i] {
			return fmt.Sprintf("line %d: %q, then %q", i+1, al[i], bl[i])
		}
	}
	return fmt.Sprintf("%d lines, then %d", len(al), len(bl))
}
