package onceflow_test

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"testing"

	"github.com/onceflow/onceflow/infra/iam"
	"github.com/onceflow/onceflow/infra/localcloud"
	"github.com/onceflow/onceflow/infra/sam/samtest"
)

// roleOf is the logical id of the role the translated function fn runs with.
func roleOf(t *testing.T, tpl doc, fn string) string {
	t.Helper()
	role := refTarget(get(tpl, "Resources", fn, "Properties", "Role"))
	if get(tpl, "Resources", role, "Type") != "AWS::IAM::Role" {
		t.Fatalf("%s: its Role %v is not an AWS::IAM::Role of the translation", fn, get(tpl, "Resources", fn, "Properties", "Role"))
	}
	return role
}

// statements are every statement of the role translated function fn runs with: its inline
// policies (the template's Policies, and those SAM adds for event sources and destinations)
// and the managed policies' documents, pinned in infra/iam (the local cloud's gatekeeper
// evaluates the same ones).
func statements(t *testing.T, tpl doc, fn string) (inline, managed []any) {
	t.Helper()
	role := get(tpl, "Resources", roleOf(t, tpl, fn), "Properties")
	for _, pol := range asList(get(role, "Policies")) {
		inline = append(inline, asList(get(pol, "PolicyDocument", "Statement"))...)
	}
	for _, arn := range asList(get(role, "ManagedPolicyArns")) {
		d, ok := iam.ManagedDocument(fmt.Sprint(arn))
		if !ok {
			t.Fatalf("%s: managed policy %v is not one whose document is pinned (infra/iam/managed.go)", fn, arn)
		}
		managed = append(managed, asList(d["Statement"])...)
	}
	return inline, managed
}

func allStatements(t *testing.T, tpl doc, fn string) []any {
	t.Helper()
	inline, managed := statements(t, tpl, fn)
	return slices.Concat(inline, managed)
}

func TestTemplate_roles_attach_only_known_managed_policies(t *testing.T) {
	tpl := translated(t)
	fns := resourcesOfType(tpl, "AWS::Lambda::Function")
	if len(fns) == 0 {
		t.Fatal("no AWS::Lambda::Function in the translation")
	}
	for id := range fns {
		if _, managed := statements(t, tpl, id); len(managed) == 0 {
			t.Errorf("%s: no managed policy; want at least its logs'", id)
		}
	}
}

// The roles the local cloud derives from a template itself (iam.Roles, what its gatekeeper
// authorises every call against) are the roles the SAM translator writes for it, for every
// template the local cloud runs in this repository: where they differ, the local cloud would
// refuse or allow what AWS would not.
func TestRoles_equal_the_SAM_translators(t *testing.T) {
	for _, path := range []string{"template.yaml", "infra/localcloud/testdata/template.yaml", "infra/localcloud/testdata/backstop/template.yaml"} {
		t.Run(path, func(t *testing.T) { rolesEqualTheTranslators(t, path) })
	}
}

// rolesEqualTheTranslators checks the roles the local cloud derives from the template at path
// against the roles the SAM translator writes for it.
func rolesEqualTheTranslators(t *testing.T, path string) {
	t.Helper()
	src, err := localcloud.LoadDocument(path)
	if err != nil {
		t.Fatal(err)
	}
	roles, err := iam.Roles(src)
	if err != nil {
		t.Fatal(err)
	}
	tr, _, err := samtest.Translate(path)
	if err != nil {
		t.Fatal(err)
	}
	fns := resourcesOfType(tr, "AWS::Lambda::Function")
	if len(fns) == 0 || len(roles) != len(fns) {
		t.Fatalf("derived %d roles for %d translated functions", len(roles), len(fns))
	}
	for id := range fns {
		r, ok := roles[id]
		if !ok {
			t.Errorf("%s: no role derived", id)
			continue
		}
		want := get(tr, "Resources", roleOf(t, tr, id), "Properties")
		if r.LogicalID != roleOf(t, tr, id) {
			t.Errorf("%s: derived role %s; the translation's is %s", id, r.LogicalID, roleOf(t, tr, id))
		}
		for _, part := range []struct {
			name string
			got  any
		}{{"ManagedPolicyArns", r.ManagedPolicyArns}, {"Policies", r.Policies}} {
			if g, w := normal(t, part.got), normal(t, get(want, part.name)); !reflect.DeepEqual(g, w) {
				t.Errorf("%s: %s derived\n  %s\nthe translator's\n  %s", id, part.name, jsonOf(g), jsonOf(w))
			}
		}
	}
}

// normal is v through JSON, as the translation is read: numbers are float64, nil slices null.
func normal(t *testing.T, v any) any {
	t.Helper()
	if l, ok := v.([]any); ok && len(l) == 0 {
		v = nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var out any
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

func jsonOf(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
