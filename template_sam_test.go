package onceflow_test

import (
	"fmt"
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
