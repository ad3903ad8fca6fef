package project

import (
	"os"
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
	for _, tt := range []struct {
		name string
		o    Options
		want string
	}{
		{"a directory with files", Options{Dir: full, Module: "example.com/x", Queue: "orders", Event: "order.placed"}, "is not empty"},
		{"a queue name in CamelCase", Options{Dir: t.TempDir(), Module: "example.com/x", Queue: "Orders", Event: "order.placed"}, `--queue "Orders"`},
		{"an event type with a space", Options{Dir: t.TempDir(), Module: "example.com/x", Queue: "orders", Event: "order placed"}, `--event "order placed"`},
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
	want := []string{"events/refunds-batch.json", "functions/refunds/main.go", "internal/refunds/refunds.go", "internal/refunds/refunds_test.go", "template.yaml"}
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
