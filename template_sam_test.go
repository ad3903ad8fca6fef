package onceflow_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/onceflow/onceflow/infra/sam/samtest"
)

// samRun is template.yaml as CloudFormation deploys it, translated once per test binary.
var samRun struct {
	once sync.Once
	doc  doc
	err  error
}

// translated returns template.yaml after the real SAM translator (infra/sam/translate.py):
// every AWS::Serverless resource expanded into the CloudFormation resources a deploy creates.
func translated(t *testing.T) doc {
	t.Helper()
	samRun.once.Do(func() { samRun.doc, _, samRun.err = samtest.Translate("template.yaml") })
	if samRun.err != nil {
		t.Fatal(samRun.err)
	}
	return samRun.doc
}

func TestTemplate_translates_with_the_SAM_translator(t *testing.T) {
	tpl := translated(t)
	res, _ := get(tpl, "Resources").(doc)
	if len(res) == 0 {
		t.Fatal("the translation has no resources")
	}
	for id, r := range res {
		if typ := fmt.Sprint(get(r, "Type")); strings.HasPrefix(typ, "AWS::Serverless::") {
			t.Errorf("%s is still %s after the transform", id, typ)
		}
	}
	// Every function of the shorthand deploys as a Lambda function with a role of its own.
	for id := range resourcesOfType(loadTemplate(t), "AWS::Serverless::Function") {
		if get(res, id, "Type") != "AWS::Lambda::Function" || get(res, id+"Role", "Type") != "AWS::IAM::Role" {
			t.Errorf("%s: want an AWS::Lambda::Function and its %sRole in the translation", id, id)
		}
	}
}

// TestTemplate_is_clean_under_cfn_lint runs cfn-lint (with .cfnlintrc) on template.yaml, which
// it transforms itself as `sam validate --lint` does, and on the translation above.
func TestTemplate_is_clean_under_cfn_lint(t *testing.T) {
	if err := samtest.Lint("template.yaml"); err != nil {
		t.Fatal(err)
	}
}

// The two checks above fail on a broken template, saying why: one the translator refuses (an
// SQS event without its queue) and one cfn-lint refuses (a runtime Lambda does not have).
func TestTemplate_checks_fail_on_a_template_the_translator_or_cfn_lint_refuses(t *testing.T) {
	raw, err := os.ReadFile("template.yaml")
	if err != nil {
		t.Fatal(err)
	}
	breaks := []struct {
		name, old, new, want string
		lint                 bool
	}{
		{"translator", "            Queue: !GetAtt LedgerQueue.Arn\n", "",
			"Resource with id [LedgerFunctionLedger] is invalid. Missing required property 'Queue'.", false},
		{"cfn-lint", "    Runtime: provided.al2023\n", "    Runtime: provided.al2099\n", "E3030 'provided.al2099' is not one of", true},
	}
	for _, b := range breaks {
		t.Run(b.name, func(t *testing.T) {
			if !strings.Contains(string(raw), b.old) {
				t.Fatalf("template.yaml no longer has %q to break: pick another line", b.old)
			}
			path := filepath.Join(t.TempDir(), "template.yaml")
			if err := os.WriteFile(path, []byte(strings.Replace(string(raw), b.old, b.new, 1)), 0o644); err != nil {
				t.Fatal(err)
			}
			_, _, err := samtest.Translate(path)
			if b.lint {
				if err != nil {
					t.Fatalf("the translator refuses a template only cfn-lint should: %v", err)
				}
				err = samtest.Lint(path)
			}
			if err == nil || !strings.Contains(err.Error(), b.want) {
				t.Errorf("broken template: %v; want an error saying %q", err, b.want)
			}
		})
	}
}
