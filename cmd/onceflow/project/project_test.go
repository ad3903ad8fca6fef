package project

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// Init refuses, writing nothing, a directory that is not empty and names that are not
// names; Add refuses a consumer whose name is taken and a directory without a project.
func TestInit_and_Add_refuse_what_they_cannot_write(t *testing.T) {
	full := t.TempDir()
	if err := os.WriteFile(filepath.Join(full, "notes.txt"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	repo := t.TempDir()
	if err := os.WriteFile(filepath.Join(repo, "go.mod"), []byte("module github.com/onceflow/onceflow\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name string
		o    Options
		want string
	}{
		{"a directory with files", Options{Dir: full, Module: "example.com/x", Queue: "orders", Event: "order.placed"}, "is not empty"},
		{"a queue name in CamelCase", Options{Dir: t.TempDir(), Module: "example.com/x", Queue: "Orders", Event: "order.placed"}, `--queue "Orders"`},
		{"an event type with a space", Options{Dir: t.TempDir(), Module: "example.com/x", Queue: "orders", Event: "order placed"}, `--event "order placed"`},
		{"a directory inside the onceflow repository", Options{Dir: filepath.Join(repo, "examples", "shop"), Module: "example.com/x", Queue: "orders", Event: "order.placed"}, "inside the onceflow repository"},
		{"an engine elsewhere", Options{Dir: t.TempDir(), Module: "example.com/x", Queue: "orders", Event: "order.placed", Engine: t.TempDir()}, "no engine module there"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			err := Init(t.Context(), tt.o, func(p string) { t.Errorf("wrote %s", p) })
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Init: %v; want an error saying %q", err, tt.want)
			}
		})
	}
	if err := Add(t.TempDir(), "refunds", "refund.issued", func(string) {}); err == nil || !strings.Contains(err.Error(), "not a project onceflow init wrote") {
		t.Errorf("Add into an empty directory: %v; want it refused", err)
	}
}

// Add writes a consumer's files and splices its unit into template.yaml; the same name again
// is refused and changes nothing.
func TestAdd_writes_a_consumer_and_refuses_its_name_again(t *testing.T) {
	dir := t.TempDir()
	c, err := newConsumer("example.com/shop", "orders", "order.placed")
	if err != nil {
		t.Fatal(err)
	}
	files := map[string][]byte{"go.mod": []byte("module example.com/shop\n")}
	if files["template.yaml"], err = templateOf("shop", c); err != nil {
		t.Fatal(err)
	}
	if err := write(dir, files, nil, func(string) {}); err != nil {
		t.Fatal(err)
	}
	var wrote []string
	if err := Add(dir, "refunds", "refund.issued", func(p string) { wrote = append(wrote, p) }); err != nil {
		t.Fatal(err)
	}
	want := []string{"cmd/localrun/refunds-key.go", "events/refunds-batch.json", "functions/refunds/main.go", "internal/refunds/refunds.go", "internal/refunds/refunds_test.go", "template.yaml"}
	if strings.Join(wrote, " ") != strings.Join(want, " ") {
		t.Errorf("Add wrote %v; want %v", wrote, want)
	}
	tpl, _ := os.ReadFile(filepath.Join(dir, "template.yaml"))
	for _, id := range []string{"OrdersFunction:", "RefundsFunction:", "RefundsQueue:", "RefundsDeadLetterQueue:"} {
		if !strings.Contains(string(tpl), id) {
			t.Errorf("template.yaml has no %s", id)
		}
	}
	handler, _ := os.ReadFile(filepath.Join(dir, "internal", "refunds", "refunds.go"))
	if !strings.Contains(string(handler), `"REFUNDS#"`) || !strings.Contains(string(handler), `"refund.issued"`) {
		t.Errorf("internal/refunds/refunds.go writes no REFUNDS# key of refund.issued events:\n%s", handler)
	}
	err = Add(dir, "refunds", "refund.issued", func(p string) { t.Errorf("wrote %s again", p) })
	if err == nil {
		t.Error("Add of a name taken: no error")
	}
	if again, _ := os.ReadFile(filepath.Join(dir, "template.yaml")); string(again) != string(tpl) {
		t.Error("a refused Add changed template.yaml")
	}
}

// The generated main reads every variable the template sets in its function's environment
// (RETENTION_DAYS, LOG_LEVEL, PAYLOAD_BUCKET, CONSUMER_NAME among them): a setting of the
// template that main ignores is a parameter that says it sets something and does not.
func TestMain_reads_every_variable_its_template_sets(t *testing.T) {
	c, err := newConsumer("example.com/shop", "order-lines", "order.placed")
	if err != nil {
		t.Fatal(err)
	}
	tpl, err := templateOf("shop", c)
	if err != nil {
		t.Fatal(err)
	}
	files, err := render(c.files(), c)
	if err != nil {
		t.Fatal(err)
	}
	main := string(files[filepath.Join("functions", "order-lines", "main.go")])
	_, vars, ok := strings.Cut(string(tpl), "        Variables:\n")
	if !ok {
		t.Fatal("template.yaml: no function's Variables")
	}
	n := 0
	for _, line := range strings.Split(vars, "\n") {
		key, _, ok := strings.Cut(strings.TrimSpace(line), ":")
		if !ok || !strings.HasPrefix(line, "          ") || strings.HasPrefix(key, "#") {
			break
		}
		n++
		if !strings.Contains(main, `"`+key+`"`) {
			t.Errorf("functions/order-lines/main.go does not read %s, which template.yaml sets", key)
		}
	}
	if n < 8 {
		t.Errorf("read %d variables of template.yaml; want its function's 8", n)
	}
}

// makeIn writes the project's Makefile and the scripts fakes (name: shell body) into a
// directory and runs make target there with them: its output, and whether it succeeded.
func makeIn(t *testing.T, target string, fakes map[string]string) (string, bool) {
	t.Helper()
	dir := t.TempDir()
	files, err := render([]file{{"Makefile", "Makefile.tmpl"}}, project{Project: "shop"})
	if err != nil {
		t.Fatal(err)
	}
	if err := write(dir, files, nil, func(string) {}); err != nil {
		t.Fatal(err)
	}
	args := []string{target, "GO=false"}
	for name, body := range fakes {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte("#!/bin/sh\n"+body+"\n"), 0o755); err != nil {
			t.Fatal(err)
		}
		args = append(args, strings.ToUpper(name)+"="+path)
	}
	cmd := exec.CommandContext(t.Context(), "make", args...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	return string(out), err == nil
}

// make run leaves alone a local cloud that was up before it: localcloud up refuses, and make
// run stops there without localcloud down.
func TestMakeRun_leaves_a_cloud_already_up_as_it_was(t *testing.T) {
	calls := filepath.Join(t.TempDir(), "calls")
	out, ok := makeIn(t, "run", map[string]string{"localcloud": `echo "$1" >>` + calls + `; [ "$1" != up ] || { echo "localcloud: already up"; exit 1; }`})
	b, _ := os.ReadFile(calls)
	if ok || strings.TrimSpace(string(b)) != "up" {
		t.Errorf("make run with a cloud already up: succeeded %v, called localcloud with %q; want it to fail after up alone:\n%s", ok, b, out)
	}
}

// make deploy refuses a SAM CLI older than SAM_MIN, saying which it needs.
func TestMakeDeploy_refuses_an_old_SAM_CLI(t *testing.T) {
	out, ok := makeIn(t, "deploy", map[string]string{"sam": `[ "$1" = --version ] && echo "SAM CLI, version 1.150.0" || { echo "sam $*"; exit 0; }`})
	if ok || !strings.Contains(out, "the SAM CLI is 1.150.0") || !strings.Contains(out, "needs 1.161.0 or later") || strings.Contains(out, "sam build") {
		t.Errorf("make deploy with SAM CLI 1.150.0: succeeded %v; want it refused before sam build, naming 1.161.0:\n%s", ok, out)
	}
}
