package iam_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/onceflow/onceflow/infra/iam"
	"github.com/onceflow/onceflow/pkg/testkit"
)

// simCase is one request decided by both evaluators: the principal's policies, the action, the
// resource and the condition keys, as the gatekeeper computes them.
type simCase struct {
	// Kind groups the cases that test one thing ("template", "ArnLike", "NotResource", ...):
	// the table of known disagreements in docs/local-cloud.md explains a disagreement by kind.
	Kind string `json:"-"`
	// What says what the case is, for its failure.
	What      string              `json:"-"`
	Principal string              `json:"principal"`
	Action    string              `json:"action"`
	Resource  string              `json:"resource"`
	Account   string              `json:"account"`
	Policies  []simPolicy         `json:"policies"`
	Context   map[string][]string `json:"context"`
	policies  []iam.Policy
}

type simPolicy struct {
	Name     string `json:"name"`
	Document any    `json:"document"`
}

// decision is the simulator's answer for one case.
type decision struct {
	Result  string   `json:"result"` // Allowed, ImplicitlyDenied, ExplicitlyDenied
	Ignored []string `json:"ignored"`
	Error   string   `json:"error"`
}

// newCase is a case of principal (its session ARN) with policies, deciding action on resource
// with condition keys ctx.
func newCase(kind, what, principal string, policies []iam.Policy, action, resource string, ctx map[string][]string) simCase {
	c := simCase{Kind: kind, What: what, Principal: principal, Action: action, Resource: resource, Account: account,
		Context: ctx, policies: policies}
	for _, p := range policies {
		c.Policies = append(c.Policies, simPolicy{Name: p.Name, Document: p.Document})
	}
	return c
}

// evaluate is the gatekeeper's evaluator's answer, in the simulator's words.
func (c simCase) evaluate() string {
	d := iam.Evaluate(c.policies, iam.Request{Action: c.Action, Resource: c.Resource, Context: c.Context})
	switch {
	case d.Allowed:
		return "Allowed"
	case d.Explicit():
		return "ExplicitlyDenied"
	}
	return "ImplicitlyDenied"
}

// simulate decides every case with the independent simulator: one Node process
// (infra/iamsim.mjs, @cloud-copilot/iam-simulate as infra/package-lock.json pins it) reading
// them all at once.
func simulate(t *testing.T, cases []simCase) []decision {
	t.Helper()
	testkit.SkipShort(t)
	infra, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(infra, "node_modules", "@cloud-copilot", "iam-simulate")); err != nil {
		t.Fatalf("the IAM simulator is not installed: `cd infra && npm ci` installs it (make test does): %v", err)
	}
	in, err := json.Marshal(cases)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("node", filepath.Join(infra, "iamsim.mjs"))
	cmd.Dir = infra
	cmd.Stdin = bytes.NewReader(in)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("node iamsim.mjs: %v\n%s", err, stderr.Bytes())
	}
	var ds []decision
	if err := json.Unmarshal(out, &ds); err != nil {
		t.Fatalf("node iamsim.mjs answered %.200q: %v", out, err)
	}
	if len(ds) != len(cases) {
		t.Fatalf("node iamsim.mjs decided %d cases of %d", len(ds), len(cases))
	}
	return ds
}

func (c simCase) String() string {
	b, _ := json.Marshal(c.Context)
	return fmt.Sprintf("%s: %s: %s on %s, context %s", c.Kind, c.What, c.Action, c.Resource, b)
}
