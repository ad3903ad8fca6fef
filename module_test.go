package onceflow_test

import (
	"go/build"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/onceflow/onceflow/pkg/testkit"
)

// TestEngine_is_importable_by_another_module builds and tests pkg/testdata/shop, a module of
// its own that imports the public engine packages through a replace directive, as a service
// outside this repository would: a package moved back under internal/, or a public API change
// that breaks importers, fails here. Its tests run against the emulators of `make test`.
func TestEngine_is_importable_by_another_module(t *testing.T) {
	testkit.Emulator(t, testkit.EndpointVariable)
	testkit.Emulator(t, testkit.SQSEndpointVariable)
	cmd := exec.Command(goTool(t), "test", "-count=1", "./...")
	cmd.Dir = filepath.Join("pkg", "testdata", "shop")
	cmd.Env = append(os.Environ(), "GOFLAGS=-mod=readonly", "GOWORK=off")
	out, err := cmd.CombinedOutput()
	t.Logf("go test in %s:\n%s", cmd.Dir, out)
	if err != nil {
		t.Fatalf("the shop module does not build or pass its tests against the engine: %v", err)
	}
}

// goTool is the go command of the toolchain running this test, or the one on PATH.
func goTool(t *testing.T) string {
	if root := build.Default.GOROOT; root != "" {
		if p := filepath.Join(root, "bin", "go"); fileExists(p) {
			return p
		}
	}
	p, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("no go command to build the importing module with: %v", err)
	}
	return p
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// importerModules is every module a service that imports the consumer author's package and the
// SQS port lists (`go list -m all`), the service itself aside: the engine; what it links (the
// Lambda events, the SDK's core and its DynamoDB, SQS and S3 clients with their internal
// modules, the canonical-JSON package); and the modules that only aws-lambda-go's and jcs's own
// go.mod files require for their tests (testify and its dependencies), which Go lists but never
// downloads the code of, nor links. A module added to the engine's graph fails here until it is
// argued in docs/engine.md and added.
var importerModules = []string{
	"github.com/onceflow/onceflow/pkg",
	"github.com/aws/aws-lambda-go",
	"github.com/aws/aws-sdk-go-v2",
	"github.com/aws/smithy-go",
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue",
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression",
	"github.com/aws/aws-sdk-go-v2/service/dynamodb",
	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams",
	"github.com/aws/aws-sdk-go-v2/service/sqs",
	"github.com/aws/aws-sdk-go-v2/service/s3",
	"github.com/aws/aws-sdk-go-v2/aws/protocol/eventstream",
	"github.com/aws/aws-sdk-go-v2/internal/configsources",
	"github.com/aws/aws-sdk-go-v2/internal/endpoints/v2",
	"github.com/aws/aws-sdk-go-v2/internal/v4a",
	"github.com/aws/aws-sdk-go-v2/service/internal/accept-encoding",
	"github.com/aws/aws-sdk-go-v2/service/internal/checksum",
	"github.com/aws/aws-sdk-go-v2/service/internal/endpoint-discovery",
	"github.com/aws/aws-sdk-go-v2/service/internal/presigned-url",
	"github.com/aws/aws-sdk-go-v2/service/internal/s3shared",
	"github.com/gowebpki/jcs",
	// go.mod-only: required by aws-lambda-go's and jcs's go.mod files for their own tests.
	"github.com/stretchr/testify",
	"github.com/davecgh/go-spew",
	"github.com/pmezard/go-difflib",
	"gopkg.in/yaml.v3",
	"go.yaml.in/yaml/v3",
}

// importerLinks is what such a service links: the modules of the packages its binary is built
// from (`go list -deps`), the service itself aside.
const importerLinks = 20

// TestImporter_lists_only_the_engines_modules builds, in a temporary directory outside this
// repository, a service that imports pkg/idempotency and pkg/sqsbatch through a replace of the
// engine's module, and lists its modules: none of the root module's (CloudFormation, SSM, YAML,
// JWT: the application's and the local cloud's), every one of importerModules' and no other.
func TestImporter_lists_only_the_engines_modules(t *testing.T) {
	testkit.SkipShort(t) // go mod tidy reads the module cache or the module proxy
	engine, err := filepath.Abs("pkg")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	write := func(name, text string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("go.mod", "module example.com/importer\n\ngo 1.26\n\nrequire github.com/onceflow/onceflow/pkg v0.0.0\n\nreplace github.com/onceflow/onceflow/pkg => "+engine+"\n")
	write("main.go", "package main\n\nimport (\n\t_ \"github.com/onceflow/onceflow/pkg/idempotency\"\n\t_ \"github.com/onceflow/onceflow/pkg/sqsbatch\"\n)\n\nfunc main() {}\n")
	gocmd := func(args ...string) string {
		t.Helper()
		cmd := exec.Command(goTool(t), args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=-mod=mod")
		out, err := cmd.Output()
		if err != nil {
			var stderr []byte
			if ee, ok := err.(*exec.ExitError); ok {
				stderr = ee.Stderr
			}
			t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, stderr)
		}
		return string(out)
	}
	gocmd("mod", "tidy")
	listed := strings.Fields(gocmd("list", "-m", "-f", "{{.Path}}", "all"))[1:] // the importer first
	if got, want := slices.Sorted(slices.Values(listed)), slices.Sorted(slices.Values(importerModules)); !slices.Equal(got, want) {
		t.Errorf("an importer lists %d modules:\n%s\nwant the %d of importerModules:\n%s", len(got), strings.Join(got, "\n"), len(want), strings.Join(want, "\n"))
	}
	linked := map[string]bool{}
	for _, m := range strings.Fields(gocmd("list", "-deps", "-f", "{{with .Module}}{{.Path}}{{end}}", ".")) {
		if m != "example.com/importer" {
			linked[m] = true
		}
	}
	if len(linked) != importerLinks {
		t.Errorf("an importer links packages of %d modules %v; want %d", len(linked), slices.Sorted(maps.Keys(linked)), importerLinks)
	}
	t.Logf("an importer of idempotency and sqsbatch lists %d modules, links %d", len(listed), len(linked))
}
