package localcloud

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/onceflow/onceflow/pkg/testkit"
)

func TestKebab_names_function_directories(t *testing.T) {
	for id, want := range map[string]string{"Api": "api", "OutboxRelay": "outbox-relay", "SQSConsumer": "sqs-consumer",
		"NoteTagger": "note-tagger", "HTTPEcho": "http-echo"} {
		if got := kebab(id); got != want {
			t.Errorf("kebab(%s) = %s, want %s", id, got, want)
		}
	}
}

func TestPackageArg_reads_the_package_from_a_make_dry_run(t *testing.T) {
	dry := "echo building\nGOOS=linux GOARCH=arm64 CGO_ENABLED=0 go build -tags lambda.norpc -trimpath -ldflags \"-s -w\" -o /x/bootstrap ./functions/api\n"
	if got, want := packageArg("/repo", dry), filepath.Join("/repo", "functions", "api"); got != want {
		t.Errorf("packageArg = %q, want %q", got, want)
	}
	if got := packageArg("/repo", "cp a b\n"); got != "" {
		t.Errorf("packageArg without go build = %q, want empty", got)
	}
}

// A function's binary is linked once into the checkout's cache, whatever number of clouds take
// it, and linked again when its source changes.
func TestCachedBuild_links_once_and_again_after_a_source_change(t *testing.T) {
	testkit.SkipShort(t)
	root, pkg := t.TempDir(), t.TempDir()
	write := func(name, text string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(pkg, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("go.mod", "module example.com/fn\n\ngo 1.22\n")
	write("main.go", "package main\n\nfunc main() { println(\"one\") }\n")
	c := &Cloud{cfg: Config{Root: root}}
	built := func() (string, os.FileInfo) {
		t.Helper()
		path, err := c.cachedBuild(t.Context(), "Fn", pkg)
		if err != nil {
			t.Fatal(err)
		}
		fi, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		return path, fi
	}
	path, first := built()
	if _, again := built(); !os.SameFile(first, again) { // go build only touches an up-to-date binary
		t.Errorf("the second cloud's build replaced %s; want the cached binary kept as it was", path)
	}
	write("main.go", "package main\n\nfunc main() { println(\"two\") }\n")
	if _, changed := built(); os.SameFile(first, changed) {
		t.Errorf("%s was kept after its source changed; want it linked again", path)
	}
	out, err := exec.Command(path).CombinedOutput()
	if err != nil || strings.TrimSpace(string(out)) != "two" {
		t.Errorf("the cached binary printed %q (%v); want the changed source's \"two\"", out, err)
	}
	dst := filepath.Join(t.TempDir(), "build", "Fn", "bootstrap")
	if err := copyExecutable(path, dst); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(dst).CombinedOutput(); err != nil || strings.TrimSpace(string(out)) != "two" {
		t.Errorf("the cloud's copy printed %q (%v); want \"two\"", out, err)
	}
}
