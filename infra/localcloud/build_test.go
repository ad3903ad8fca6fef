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

// A function's binary is linked once into the user's cache, whatever number of clouds take
// it, and linked again when its source changes; each cloud gets a copy of it.
func TestCachedBuild_links_once_and_again_after_a_source_change(t *testing.T) {
	testkit.SkipShort(t)
	cache, pkg := t.TempDir(), t.TempDir()
	write := func(name, text string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(pkg, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("go.mod", "module example.com/fn\n\ngo 1.22\n")
	write("main.go", "package main\n\nfunc main() { println(\"one\") }\n")
	c := &Cloud{cfg: Config{CacheDir: cache}}
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
		cached, err := filepath.Glob(filepath.Join(cache, "functions", "*", "bootstrap"))
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

// A function of a project outside this module is found as SAM builds it: CodeUri a main package
// with or without BuildMethod (go1.x builds CodeUri itself), or BuildMethod makefile with the
// package its build-<LogicalId> target builds; anything else names what it tried.
func TestMainPackage_finds_an_outside_projects_function_as_SAM_builds_it(t *testing.T) {
	project := t.TempDir()
	write := func(name, text string) {
		t.Helper()
		path := filepath.Join(project, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("go.mod", "module example.com/orders\n\ngo 1.22\n")
	write("orders.go", "package orders\n")
	write("cmd/orders/main.go", "// Command orders.\npackage main\n\nfunc main() {}\n")
	write("Makefile", "build-OrdersFunction:\n\tGOOS=linux GOARCH=arm64 go build -tags lambda.norpc -o $(ARTIFACTS_DIR)/bootstrap ./cmd/orders\n")
	main := filepath.Join(project, "cmd", "orders")
	for _, tc := range []struct {
		name, codeURI, method, want string
	}{
		{"a main package", "cmd/orders", "", main},
		{"go1.x", "cmd/orders", "go1.x", main},
		{"makefile, CodeUri the package", "cmd/orders", "makefile", main},
		{"makefile, CodeUri the project", ".", "makefile", main},
		{"no BuildMethod, CodeUri the project", ".", "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := &Cloud{cfg: Config{StateDir: t.TempDir()}, tmpl: &Template{BuildMethod: map[string]string{"OrdersFunction": tc.method}}}
			got, err := c.mainPackage(t.Context(), &Function{ID: "OrdersFunction", CodeDir: filepath.Join(project, tc.codeURI)})
			if tc.want == "" {
				if err == nil || !strings.Contains(err.Error(), "function OrdersFunction: no Go main package in CodeUri") {
					t.Fatalf("mainPackage = %q, %v; want an error naming the function and CodeUri", got, err)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("mainPackage = %q, %v; want %q", got, err, tc.want)
			}
		})
	}
}

// The build cache forgets the builds of packages that are gone (a project in a temporary
// directory), but never one another cloud holds locked, nor one whose package is still there.
func TestPruneBuilds_removes_the_entries_of_packages_that_are_gone(t *testing.T) {
	functions, here := filepath.Join(t.TempDir(), "functions"), t.TempDir()
	entry := func(name, source string) string {
		t.Helper()
		dir := filepath.Join(functions, name)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		for file, text := range map[string]string{"source": source, "lock": "", "bootstrap": "binary"} {
			if err := os.WriteFile(filepath.Join(dir, file), []byte(text), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		return dir
	}
	kept, gone, held := entry("kept", here), entry("gone", filepath.Join(here, "removed")), entry("held", filepath.Join(here, "removed-too"))
	unlock, err := lock(t.Context(), filepath.Join(held, "lock"))
	if err != nil {
		t.Fatal(err)
	}
	defer unlock()
	pruneBuilds(functions)
	for dir, want := range map[string]bool{kept: true, gone: false, held: true} {
		if _, err := os.Stat(filepath.Join(dir, "bootstrap")); (err == nil) != want {
			t.Errorf("%s: present %v after the prune, want %v", filepath.Base(dir), err == nil, want)
		}
	}
}
