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
// it, and linked again when its source changes; each cloud gets a copy of it.
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
	// built builds the function for a new cloud, checks that the cloud's copy prints want, and
	// returns the cache entry's binary.
	built := func(want string) os.FileInfo {
		t.Helper()
		dst := filepath.Join(t.TempDir(), "build", "Fn", "bootstrap")
		if err := c.cachedBuild(t.Context(), "Fn", pkg, dst); err != nil {
			t.Fatal(err)
		}
		if out, err := exec.Command(dst).CombinedOutput(); err != nil || strings.TrimSpace(string(out)) != want {
			t.Fatalf("the cloud's copy printed %q (%v); want %q", out, err, want)
		}
		cached, err := filepath.Glob(filepath.Join(root, ".local", "cache", "functions", "*", "bootstrap"))
		if err != nil || len(cached) != 1 {
			t.Fatalf("cache entries %v (%v); want one, the function's", cached, err)
		}
		fi, err := os.Stat(cached[0])
		if err != nil {
			t.Fatal(err)
		}
		return fi
	}
	first := built("one")
	if again := built("one"); !os.SameFile(first, again) { // go build only touches an up-to-date binary
		t.Error("the second cloud's build replaced the cached binary; want it kept as it was")
	}
	write("main.go", "package main\n\nfunc main() { println(\"two\") }\n")
	if changed := built("two"); os.SameFile(first, changed) {
		t.Error("the cached binary was kept after its source changed; want it linked again")
	}
}
