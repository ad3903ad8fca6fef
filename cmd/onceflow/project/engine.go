package project

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strings"
)

// EngineModule is the engine's module path, which a project requires.
const EngineModule = "github.com/onceflow/onceflow/pkg"

// EngineVersion is the engine's tagged version a project requires without --engine; empty
// while no version is tagged (docs/contributing.md, steps of a release).
const EngineVersion = ""

// checkoutEngine is the pkg/ directory of the checkout this program was built from, read from
// the path of this source file the compiler recorded: "" when it was built with -trimpath, from
// the module cache (where pkg/, a module of its own, is not), or the checkout is gone.
func checkoutEngine() string {
	_, src, _, ok := runtime.Caller(0)
	if !ok || !filepath.IsAbs(src) {
		return ""
	}
	dir := filepath.Join(filepath.Dir(src), "..", "..", "..", "pkg")
	if isEngine(dir) != nil {
		return ""
	}
	return filepath.Clean(dir)
}

// isEngine checks that dir holds the engine's module.
func isEngine(dir string) error {
	b, err := os.ReadFile(filepath.Join(dir, "go.mod"))
	if err != nil {
		return fmt.Errorf("--engine %s: no engine module there: %w", dir, err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if strings.TrimSpace(line) == "module "+EngineModule {
			return nil
		}
	}
	return fmt.Errorf("--engine %s: its go.mod is not module %s", dir, EngineModule)
}

// engine is how a project requires the engine: a replace to dir, or the tagged version.
type engine struct {
	dir     string // absolute; "" to require EngineVersion from the module proxy
	version string
}

// resolveEngine is the engine of flag (a directory), else of the checkout this program was
// built from, else EngineVersion.
func resolveEngine(flag string) (engine, error) {
	if flag != "" {
		dir, err := filepath.Abs(flag)
		if err != nil {
			return engine{}, err
		}
		return engine{dir: dir, version: "v0.0.0"}, isEngine(dir)
	}
	if dir := checkoutEngine(); dir != "" {
		return engine{dir: dir, version: "v0.0.0"}, nil
	}
	if EngineVersion != "" {
		return engine{version: EngineVersion}, nil
	}
	return engine{}, errors.New("no engine: no version of " + EngineModule + " is tagged yet and this onceflow was not built from a checkout: give --engine PATH, the pkg/ directory of a clone of onceflow")
}

// requires are the modules a project's code imports besides the engine, at the versions this
// program was built with (the engine's own), so that go mod tidy finds them in the module cache
// of a machine that built onceflow and a project matches the engine it was tested with.
var requires = []string{
	"github.com/aws/aws-lambda-go",
	"github.com/aws/aws-sdk-go-v2",
	"github.com/aws/aws-sdk-go-v2/config",
	"github.com/aws/aws-sdk-go-v2/credentials",
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue",
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression",
	"github.com/aws/aws-sdk-go-v2/service/dynamodb",
	"github.com/aws/aws-sdk-go-v2/service/s3",
	"github.com/aws/aws-sdk-go-v2/service/sqs",
}

// goMod is a project's go.mod before go mod tidy completes it.
func (e engine) goMod(module string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "module %s\n\ngo 1.26\n\nrequire (\n\t%s %s\n", module, EngineModule, e.version)
	versions := map[string]string{}
	if info, ok := debug.ReadBuildInfo(); ok {
		for _, d := range info.Deps {
			versions[d.Path] = d.Version
		}
	}
	for _, m := range requires {
		if v := versions[m]; v != "" {
			fmt.Fprintf(&b, "\t%s %s\n", m, v)
		}
	}
	b.WriteString(")\n")
	if e.dir != "" {
		fmt.Fprintf(&b, "\n// The engine from a clone until a version of it is tagged: onceflow init --engine.\nreplace %s => %s\n", EngineModule, e.dir)
	}
	return b.String()
}
