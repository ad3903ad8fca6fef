package idempotency_test

import (
	"strings"
	"testing"

	"github.com/onceflow/onceflow/pkg/idempotency"
)

func TestConfig_Validate_reports_every_problem(t *testing.T) {
	cases := []struct {
		name string
		cfg  idempotency.Config
		want []string
	}{
		{"empty", idempotency.Config{}, []string{"consumer name is required", "idempotency table is required"}},
		{"separator in the name", idempotency.Config{Name: "a#b", Table: "t"}, []string{`"#"`}},
		{"negative retention", idempotency.Config{Name: "a", Table: "t", Retention: -1}, []string{"retention"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.cfg.Validate()
			if err == nil {
				t.Fatal("Validate = nil, want an error")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("Validate = %q, want it to mention %s", err, w)
				}
			}
		})
	}
	if err := (idempotency.Config{Name: "note-tagger", Table: "t"}).Validate(); err != nil {
		t.Errorf("a valid config: %v", err)
	}
}
