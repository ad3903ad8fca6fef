package main_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func TestUp_refuses_unknown_functions_and_parameters_before_starting_anything(t *testing.T) {
	bin := buildCLI(t)
	cases := []struct {
		name string
		args []string
		want []string
	}{
		{"the old README example", []string{"-envs", "Consumer=3,Api=1"},
			[]string{`no function "Consumer"; functions: ApiFunction, LedgerFunction, NoteNotifierFunction, NoteTaggerFunction, OutboxRelayFunction`}},
		{"a value outside AllowedValues and an unknown parameter", []string{"-param", "LogLevel=verbose", "-param", "Loglevel=debug"},
			[]string{`LogLevel="verbose" refused: allowed values: debug, info, warn, error`, `no parameter "Loglevel"; parameters: `, "LogLevel, LogRetentionDays, RetentionDays, Stage, WebhookSecretParameterName, WebhookUrlParameterName"}},
		{"a number below MinValue", []string{"-param", "RetentionDays=7"}, []string{`RetentionDays="7" refused: at least 23`}},
		{"a count below one", []string{"-envs", "ledger=0"}, []string{`-envs "ledger=0": want Function=N, N at least 1`}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			state := t.TempDir()
			args := append([]string{"up", "-state", state, "-template", "../../../template.yaml"}, c.args...)
			out, err := exec.Command(bin, args...).CombinedOutput()
			if err == nil {
				t.Fatalf("up %v succeeded:\n%s", c.args, out)
			}
			for _, w := range c.want {
				if !strings.Contains(string(out), w) {
					t.Errorf("output does not say %q:\n%s", w, out)
				}
			}
			if _, err := os.Stat(filepath.Join(state, "state.json")); !os.IsNotExist(err) {
				t.Errorf("something was started: state.json %v", err)
			}
		})
	}
}
