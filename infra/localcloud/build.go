package localcloud

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"unicode"
)

// ensureRIE installs the pinned Runtime Interface Emulator into Root/.local/bin when allowed.
func (c *Cloud) ensureRIE(ctx context.Context) error {
	if _, err := os.Stat(c.cfg.RIE); err == nil {
		return nil
	}
	if !c.cfg.Install {
		return fmt.Errorf("aws-lambda-rie not found at %s: run `make .local/bin/aws-lambda-rie` or `GOBIN=$PWD/.local/bin go install %s` (make up and make test install it)", c.cfg.RIE, RIEModule)
	}
	c.log.Info("installing the Lambda Runtime Interface Emulator", "module", RIEModule)
	cmd := exec.CommandContext(ctx, "go", "install", RIEModule)
	cmd.Env = append(os.Environ(), "GOBIN="+filepath.Dir(c.cfg.RIE))
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("go install %s: %w\n%s", RIEModule, err, out)
	}
	return nil
}

// build compiles a function's main package into StateDir/build/<LogicalId>/bootstrap, for the
// host (the local cloud runs binaries natively, not in an Amazon Linux container).
func (c *Cloud) build(ctx context.Context, f *Function) (string, error) {
	dir, err := c.mainPackage(ctx, f)
	if err != nil {
		return "", err
	}
	out := filepath.Join(c.cfg.StateDir, "build", f.ID, "bootstrap")
	cmd := exec.CommandContext(ctx, "go", "build", "-tags", "lambda.norpc", "-o", out, ".")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if b, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("build %s (%s): %w\n%s", f.ID, dir, err, b)
	}
	return out, nil
}

// mainPackage finds the directory of a function's Go main package: CodeUri itself when it
// holds one; with BuildMethod makefile and CodeUri a shared root (SAM then runs
// `make build-<LogicalId>`), the package that target builds, read from `make -n`; else
// functions/<kebab-case logical id without "Function"> under CodeUri.
func (c *Cloud) mainPackage(ctx context.Context, f *Function) (string, error) {
	if isMainPackage(f.CodeDir) {
		return f.CodeDir, nil
	}
	var tried []string
	if c.tmpl.BuildMethod[f.ID] == "makefile" {
		cmd := exec.CommandContext(ctx, "make", "-n", "build-"+f.ID, "ARTIFACTS_DIR="+filepath.Join(c.cfg.StateDir, "build", f.ID))
		cmd.Dir = f.CodeDir
		out, err := cmd.Output()
		if err == nil {
			if dir := packageArg(f.CodeDir, string(out)); dir != "" && isMainPackage(dir) {
				return dir, nil
			}
		}
		tried = append(tried, "make -n build-"+f.ID)
	}
	dir := filepath.Join(f.CodeDir, "functions", kebab(strings.TrimSuffix(f.ID, "Function")))
	if isMainPackage(dir) {
		return dir, nil
	}
	tried = append(tried, dir)
	return "", fmt.Errorf("function %s: no Go main package in CodeUri %s (tried %s)", f.ID, f.CodeDir, strings.Join(tried, ", "))
}

// packageArg returns the last ./relative argument of a `go build` line in a make dry run.
func packageArg(base, dryRun string) string {
	found := ""
	for _, line := range strings.Split(dryRun, "\n") {
		if !strings.Contains(line, "go build") {
			continue
		}
		for _, tok := range strings.Fields(line) {
			if strings.HasPrefix(tok, "./") || strings.HasPrefix(tok, "../") {
				found = filepath.Join(base, tok)
			}
		}
	}
	return found
}

func isMainPackage(dir string) bool {
	files, _ := filepath.Glob(filepath.Join(dir, "*.go"))
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		b, err := os.ReadFile(f)
		if err == nil && (strings.HasPrefix(string(b), "package main") || strings.Contains(string(b), "\npackage main")) {
			return true
		}
	}
	return false
}

// kebab turns a CamelCase id into kebab-case: OutboxRelay → outbox-relay, SQSConsumer → sqs-consumer.
func kebab(id string) string {
	r := []rune(id)
	var b strings.Builder
	for i, c := range r {
		if unicode.IsUpper(c) && i > 0 && (unicode.IsLower(r[i-1]) || (i+1 < len(r) && unicode.IsLower(r[i+1]))) {
			b.WriteByte('-')
		}
		b.WriteRune(unicode.ToLower(c))
	}
	return b.String()
}
