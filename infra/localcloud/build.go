package localcloud

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"
	"unicode"

	"github.com/onceflow/onceflow/pkg/testkit/emulator"
)

// ensureRIE installs the pinned Runtime Interface Emulator at Config.RIE when allowed.
func (c *Cloud) ensureRIE(ctx context.Context) error {
	if _, err := os.Stat(c.cfg.RIE); err == nil {
		return nil
	}
	if !c.cfg.Install {
		return fmt.Errorf("aws-lambda-rie not found at %s: `localcloud install` installs it (so does Start with Config.Install), or GOBIN=%s go install %s", c.cfg.RIE, filepath.Dir(c.cfg.RIE), RIEModule)
	}
	c.log.Info("installing the Lambda Runtime Interface Emulator", "module", RIEModule)
	return installRIE(ctx, c.cfg.RIE)
}

// installRIE installs RIEModule as the binary at path: go install puts it into a temporary
// directory beside path, from where it is renamed into place, so that two processes installing
// at once leave one whole binary.
func installRIE(ctx context.Context, path string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("install aws-lambda-rie: %w", err)
	}
	tmp, err := os.MkdirTemp(filepath.Dir(path), ".rie-*")
	if err != nil {
		return fmt.Errorf("install aws-lambda-rie: %w", err)
	}
	defer os.RemoveAll(tmp)
	cmd := exec.CommandContext(ctx, "go", "install", RIEModule)
	cmd.Env = append(os.Environ(), "GOBIN="+tmp, "GOWORK=off")
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("go install %s: %w\n%s", RIEModule, err, out)
	}
	if err := os.Rename(filepath.Join(tmp, "aws-lambda-rie"), path); err != nil {
		return fmt.Errorf("install aws-lambda-rie: %w", err)
	}
	return nil
}

// Install installs what Start installs on first use, for a cloud of cfg: the engine's pinned
// emulators (emulator.Install, in the user's cache) and the pinned Runtime Interface Emulator
// at cfg.RIE (default: in cfg.CacheDir). It returns the emulators' directory and the RIE's path.
func Install(ctx context.Context, cfg Config) (emulators, rie string, err error) {
	if cfg, err = cfg.withCache(); err != nil {
		return "", "", err
	}
	if _, err := os.Stat(cfg.RIE); err != nil {
		if err := installRIE(ctx, cfg.RIE); err != nil {
			return "", "", err
		}
	}
	if emulators, err = emulator.Install(ctx); err != nil {
		return "", "", err
	}
	return emulators, cfg.RIE, nil
}

// build compiles a function's main package into StateDir/build/<LogicalId>/bootstrap, for the
// host (the local cloud runs binaries natively, not in an Amazon Linux container). The binary is
// linked once into a cache every cloud of the user shares (cachedBuild) and copied from there.
func (c *Cloud) build(ctx context.Context, f *Function) (string, error) {
	dir, err := c.mainPackage(ctx, f)
	if err != nil {
		return "", err
	}
	out := filepath.Join(c.cfg.StateDir, "build", f.ID, "bootstrap")
	return out, c.cachedBuild(ctx, f.ID, dir, out)
}

// cachedBuild builds the main package in dir into CacheDir/functions/<dir's hash>/bootstrap and
// copies it to dst. go build leaves a binary whose build ID says it is up to
// date as it is, so that while the project does not change only the first cloud links it (about
// 1.5 s of CPU a function), and a changed source (or commit: the binary carries its VCS stamp)
// is always linked again. The entry is locked from the build to the end of the copy, so that two
// clouds (two test processes) never write it at once nor copy it half written, and go build
// links in the entry's own tmp/, so that it renames its binary into place: a build killed
// half-way leaves the last whole binary, never a truncated one. Entries whose package is gone
// are pruned first (pruneBuilds).
func (c *Cloud) cachedBuild(ctx context.Context, id, dir, dst string) error {
	sum := sha256.Sum256([]byte(dir))
	functions := filepath.Join(c.cfg.CacheDir, "functions")
	pruneBuilds(functions)
	entry := filepath.Join(functions, hex.EncodeToString(sum[:8]))
	tmp := filepath.Join(entry, "tmp")
	if err := os.MkdirAll(tmp, 0o755); err != nil {
		return fmt.Errorf("build %s: %w", id, err)
	}
	unlock, err := lock(ctx, filepath.Join(entry, "lock"))
	if err != nil {
		return fmt.Errorf("build %s: %w", id, err)
	}
	defer unlock()
	if err := os.WriteFile(filepath.Join(entry, sourceFile), []byte(dir), 0o644); err != nil {
		return fmt.Errorf("build %s: %w", id, err)
	}
	bin := filepath.Join(entry, "bootstrap")
	cmd := exec.CommandContext(ctx, "go", "build", "-tags", "lambda.norpc", "-o", bin, ".")
	cmd.Dir = dir
	// A function is built as its own module resolves it (its go.mod, its replaces), never by a
	// workspace the caller happens to run in (make test's GOWORK), which may not list it.
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOTMPDIR="+tmp, "GOWORK=off")
	if b, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("build %s (%s): %w\n%s", id, dir, err, b)
	}
	if err := copyExecutable(bin, dst); err != nil {
		return fmt.Errorf("build %s: %w", id, err)
	}
	return nil
}

// lock takes an exclusive lock on the file at path (created if missing), waiting for it until
// ctx ends; the function it returns releases it.
func lock(ctx context.Context, path string) (func(), error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, err
	}
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			return func() { f.Close() }, nil // closing the file releases its lock
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) {
			f.Close()
			return nil, fmt.Errorf("lock %s: %w", path, err)
		}
		select {
		case <-ctx.Done():
			f.Close()
			return nil, fmt.Errorf("lock %s: %w", path, context.Cause(ctx))
		case <-time.After(50 * time.Millisecond): // another cloud builds this function
		}
	}
}

// copyExecutable copies the file at src to dst, executable, through a temporary file renamed
// into place (a binary still running from dst keeps its own copy).
func copyExecutable(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(dst), ".bootstrap-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name()) // after the rename, nothing is left to remove
	if _, err := io.Copy(tmp, in); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Chmod(0o755); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), dst)
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
