// Package samtest runs the real SAM tool chain on a template for tests: the translator
// (infra/sam/translate.py), cfn-lint, and a comparison of a running local cloud with the
// translation. Only tests import it.
package samtest

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
)

// InstallTools says how to install the tools these checks run.
const InstallTools = "pip install aws-sam-translator==1.110.0 cfn-lint==1.51.0 awscli"

// Doc is a template or its translation as plain Go values, intrinsics in their long forms.
type Doc = map[string]any

// Tool finds a command of the SAM tool chain on PATH, or says what to install.
func Tool(name string) (string, error) {
	p, err := exec.LookPath(name)
	if err != nil {
		return "", fmt.Errorf("%s is not installed; the template checks need Python 3 and: %s", name, InstallTools)
	}
	return p, nil
}

// Translate returns the template at path as CloudFormation deploys it, by the real SAM
// translator, and the file holding that JSON. The result is cached in the module's
// .local/sam/, named by the hash of the template and the script.
func Translate(path string) (Doc, string, error) {
	root, err := moduleRoot()
	if err != nil {
		return nil, "", err
	}
	script := filepath.Join(root, "infra", "sam", "translate.py")
	key, err := hash(path, script)
	if err != nil {
		return nil, "", err
	}
	cached := filepath.Join(root, ".local", "sam", "translated-"+key+".json")
	out, err := os.ReadFile(cached)
	if err != nil {
		python, err := Tool("python3")
		if err != nil {
			return nil, "", err
		}
		var stderr bytes.Buffer
		cmd := exec.Command(python, script, path)
		cmd.Env = append(os.Environ(), "AWS_DEFAULT_REGION=eu-west-1")
		cmd.Stderr = &stderr
		if out, err = cmd.Output(); err != nil {
			return nil, "", fmt.Errorf("translate %s: %v\n%s", path, err, stderr.String())
		}
		if err := writeFile(cached, out); err != nil {
			return nil, "", err
		}
	}
	var d Doc
	if err := json.Unmarshal(out, &d); err != nil {
		return nil, "", fmt.Errorf("translation of %s: %w", path, err)
	}
	return d, cached, nil
}

// Lint runs cfn-lint (with the module's .cfnlintrc) on the template at path,
// which cfn-lint transforms itself as `sam validate --lint` does, and on its translation. Any
// finding, warnings included, is an error holding cfn-lint's report. A pass is cached by the
// hash of the template, the script and the configuration.
func Lint(path string) error {
	_, translation, err := Translate(path)
	if err != nil {
		return err
	}
	root, err := moduleRoot()
	if err != nil {
		return err
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return err
	}
	key, err := hash(abs, filepath.Join(root, "infra", "sam", "translate.py"), filepath.Join(root, ".cfnlintrc"))
	if err != nil {
		return err
	}
	passed := filepath.Join(root, ".local", "sam", "cfn-lint-passed-"+key)
	if _, err := os.Stat(passed); err == nil {
		return nil
	}
	lint, err := Tool("cfn-lint")
	if err != nil {
		return err
	}
	cmd := exec.Command(lint, "--", abs, translation)
	cmd.Dir = root
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit):
		return fmt.Errorf("cfn-lint finds problems (fix them, or leave a rule out in .cfnlintrc saying why):\n%s", out)
	case err != nil:
		return fmt.Errorf("cfn-lint: %v\n%s", err, out)
	}
	return writeFile(passed, out)
}

// hash is a short hash of the files' contents, naming a cached result.
func hash(paths ...string) (string, error) {
	h := sha256.New()
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			return "", err
		}
		fmt.Fprintf(h, "%s %d\n", filepath.Base(p), len(b))
		h.Write(b)
	}
	return hex.EncodeToString(h.Sum(nil))[:16], nil
}

func writeFile(path string, b []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	// test binaries of several packages may write the same result at once
	f, err := os.CreateTemp(filepath.Dir(path), filepath.Base(path)+".*")
	if err != nil {
		return err
	}
	_, err = f.Write(b)
	if err := errors.Join(err, f.Close()); err != nil {
		return err
	}
	return os.Rename(f.Name(), path)
}

// moduleRoot is the directory holding go.mod, from the working directory up.
func moduleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no go.mod above the working directory")
		}
		dir = parent
	}
}
