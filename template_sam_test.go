package onceflow_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// The real tools of a SAM deploy, which every test of what deploys needs: the translator (the
// library behind the AWS::Serverless-2016-10-31 transform), cfn-lint and the AWS CLI.
const installTools = "pip install aws-sam-translator==1.110.0 cfn-lint==1.51.0 awscli"

// samCache is where translations and lint results are kept, by the hash of what they read.
const samCache = ".local/sam"

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
	samRun.once.Do(func() { samRun.doc, samRun.err = translate("template.yaml") })
	if samRun.err != nil {
		t.Fatal(samRun.err)
	}
	return samRun.doc
}

// translate runs the translator on the template at path, or reads its cached output.
func translate(path string) (doc, error) {
	key, err := inputsHash(path, "infra/sam/translate.py")
	if err != nil {
		return nil, err
	}
	cached := filepath.Join(samCache, "translated-"+key+".json")
	out, err := os.ReadFile(cached)
	if err != nil {
		python, err := tool("python3")
		if err != nil {
			return nil, err
		}
		var stderr bytes.Buffer
		cmd := exec.Command(python, "infra/sam/translate.py", path)
		cmd.Env = append(os.Environ(), "AWS_DEFAULT_REGION=eu-west-1")
		cmd.Stderr = &stderr
		if out, err = cmd.Output(); err != nil {
			return nil, fmt.Errorf("translate %s: %v\n%s", path, err, stderr.String())
		}
		if err := writeCache(cached, out); err != nil {
			return nil, err
		}
	}
	var d doc
	if err := json.Unmarshal(out, &d); err != nil {
		return nil, fmt.Errorf("translation of %s: %w", path, err)
	}
	return d, nil
}

// tool finds a command of the SAM tool chain, or says what to install.
func tool(name string) (string, error) {
	p, err := exec.LookPath(name)
	if err != nil {
		return "", fmt.Errorf("%s is not installed; the template checks need Python 3 and: %s", name, installTools)
	}
	return p, nil
}

// inputsHash is a short hash of the files' contents, naming a cached result.
func inputsHash(paths ...string) (string, error) {
	h := sha256.New()
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			return "", err
		}
		fmt.Fprintf(h, "%s %d\n", p, len(b))
		h.Write(b)
	}
	return hex.EncodeToString(h.Sum(nil))[:16], nil
}

func writeCache(path string, b []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, b, 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, path)
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
	translated(t)
	key, err := inputsHash("template.yaml", "infra/sam/translate.py", ".cfnlintrc")
	if err != nil {
		t.Fatal(err)
	}
	passed := filepath.Join(samCache, "cfn-lint-passed-"+key)
	if fileExists(passed) {
		return // this template, script and configuration passed before
	}
	lint, err := tool("cfn-lint")
	if err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(lint, "--", "template.yaml", filepath.Join(samCache, "translated-"+mustHash(t)+".json")).CombinedOutput()
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit):
		t.Fatalf("cfn-lint finds problems (fix them, or leave a rule out in .cfnlintrc saying why):\n%s", out)
	case err != nil:
		t.Fatalf("cfn-lint: %v\n%s", err, out)
	}
	if err := writeCache(passed, out); err != nil {
		t.Fatal(err)
	}
}

func mustHash(t *testing.T) string {
	t.Helper()
	key, err := inputsHash("template.yaml", "infra/sam/translate.py")
	if err != nil {
		t.Fatal(err)
	}
	return key
}
