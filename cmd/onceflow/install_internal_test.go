package main

import (
	"bytes"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

const module = "github.com/onceflow/onceflow/"

// goCmd runs the go command in this package's directory and returns its standard output.
func goCmd(t *testing.T, args ...string) string {
	t.Helper()
	var out, errOut bytes.Buffer
	cmd := exec.CommandContext(t.Context(), "go", args...)
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, errOut.String())
	}
	return out.String()
}

// The tool is part of the engine: it links the public packages, the AWS SDK, aws-lambda-go
// and the standard library only, never the local cloud (infra/) or the example application
// (internal/), so that `go install` of it works for any stack. Its tests link no more. The one
// exception is the consumer unit (infra/consumerunit), the template text onceflow init writes:
// it links the public packages and the standard library, and whatever else it would link of
// infra/ or internal/ fails here too.
func TestOnceflow_links_no_infra_and_no_application_package(t *testing.T) {
	for _, tt := range []struct {
		name  string
		flags []string
	}{{"the tool", nil}, {"its tests", []string{"-test"}}} {
		t.Run(tt.name, func(t *testing.T) {
			var bad []string
			for _, pkg := range strings.Fields(goCmd(t, append(append([]string{"list", "-deps"}, tt.flags...), ".")...)) {
				if pkg != module+"infra/consumerunit" && (strings.HasPrefix(pkg, module+"infra/") || strings.HasPrefix(pkg, module+"internal/")) {
					bad = append(bad, pkg)
				}
			}
			if len(bad) > 0 {
				t.Errorf("go list -deps %s names %s", strings.Join(tt.flags, " "), strings.Join(bad, ", "))
			}
		})
	}
}

// The built binary answers --help with its usage and exit status 0, and a command it does not
// know with status 2 and the usage.
func TestOnceflow_binary_prints_its_usage(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "onceflow")
	goCmd(t, "build", "-o", bin, ".")
	tests := []struct {
		name string
		args []string
		code int
		want string
	}{
		{"--help", []string{"--help"}, 0, "usage: onceflow <command> <subcommand>"},
		{"a subcommand's --help", []string{"dlq", "redrive", "--help"}, 0, "-dry-run"},
		{"an unknown command", []string{"dlq", "purge"}, 2, `unknown command "dlq purge"`},
		{"init without its flags", []string{"init", "shop"}, 2, "onceflow init: want DIR --module M --queue Q --event TYPE"},
		{"init's --help", []string{"init", "--help"}, 0, "-engine"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out bytes.Buffer
			cmd := exec.CommandContext(t.Context(), bin, tt.args...)
			cmd.Stdout, cmd.Stderr = &out, &out
			err := cmd.Run()
			code := 0
			if ee, ok := err.(*exec.ExitError); ok {
				code = ee.ExitCode()
			} else if err != nil {
				t.Fatal(err)
			}
			if code != tt.code || !strings.Contains(out.String(), tt.want) {
				t.Errorf("onceflow %s: exit %d, want %d with %q in\n%s", strings.Join(tt.args, " "), code, tt.code, tt.want, out.String())
			}
		})
	}
}
