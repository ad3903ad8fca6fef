package project

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/onceflow/onceflow/infra/consumerunit"
)

// Options are onceflow init's.
type Options struct {
	Dir    string // the project's directory: new, or empty
	Module string // its module path: example.com/shop
	Queue  string // the first consumer's name, its queue's: orders
	Event  string // the event type it applies: order.placed
	Engine string // the engine's directory (a clone's pkg/); "" for the default (resolveEngine)
}

// project is what the project-wide files are written from.
type project struct {
	Project      string // the project's name: the stack's, the template's Description
	EngineModule string
	EngineNote   string // how go.mod requires the engine, for the README
}

// Init writes a new project into o.Dir, then completes its go.mod and go.sum with go mod
// tidy (which reads the module cache, and the module proxy for what is not in it). It prints
// each file written to log. It writes nothing into a directory that is not empty.
func Init(ctx context.Context, o Options, log func(string)) error {
	if o.Dir == "" || o.Module == "" || o.Queue == "" || o.Event == "" {
		return errors.New("want DIR, --module, --queue and --event")
	}
	if err := empty(o.Dir); err != nil {
		return err
	}
	abs, err := filepath.Abs(o.Dir)
	if err != nil {
		return err
	}
	if err := outsideRepository(abs); err != nil {
		return err
	}
	c, err := newConsumer(o.Module, o.Queue, o.Event)
	if err != nil {
		return err
	}
	eng, err := resolveEngine(o.Engine)
	if err != nil {
		return err
	}
	name := projectName(filepath.Base(abs))
	p := project{Project: name, EngineModule: EngineModule, EngineNote: eng.note()}
	files, err := render([]file{{"Makefile", "Makefile.tmpl"}, {"README.md", "README.md.tmpl"}, {"samconfig.toml", "samconfig.toml.tmpl"},
		{".gitignore", "gitignore.tmpl"}, {"cmd/localrun/main.go", "localrun_main.go.tmpl"}, {"cmd/localrun/cloud.go", "localrun_cloud.go.tmpl"},
		{"cmd/localrun/workload.go", "localrun_workload.go.tmpl"}, {"cmd/localrun/check.go", "localrun_check.go.tmpl"},
		{"cmd/localrun/redeliver.go", "localrun_redeliver.go.tmpl"}}, p)
	if err != nil {
		return err
	}
	if files["template.yaml"], err = templateOf(name, c); err != nil {
		return err
	}
	if err := c.addFiles(files); err != nil {
		return err
	}
	files["go.mod"] = []byte(eng.goMod(o.Module))
	if err := write(o.Dir, files, nil, log); err != nil {
		return err
	}
	if err := tidy(ctx, o.Dir); err != nil {
		return err
	}
	log("go.sum")
	return nil
}

// Add writes one more consumer into the project in dir and splices its unit into its
// template.yaml. It changes nothing when the name is taken.
func Add(dir, queue, event string, log func(string)) error {
	module, err := modulePath(dir)
	if err != nil {
		return err
	}
	c, err := newConsumer(module, queue, event)
	if err != nil {
		return err
	}
	tpl, err := os.ReadFile(filepath.Join(dir, "template.yaml"))
	if err != nil {
		return fmt.Errorf("not a project onceflow init wrote: %w", err)
	}
	files := map[string][]byte{}
	if files["template.yaml"], err = consumerunit.Add(tpl, c.unit()); err != nil {
		return fmt.Errorf("template.yaml: %w", err)
	}
	if err := c.addFiles(files); err != nil {
		return err
	}
	return write(dir, files, map[string]bool{"template.yaml": true}, log)
}

// templateOf is the template of project name with its first consumer c.
func templateOf(name string, c consumer) ([]byte, error) {
	b, err := consumerunit.Template(consumerunit.Project{Name: name, Consumers: []consumerunit.Consumer{c.unit()}})
	if err != nil {
		return nil, fmt.Errorf("template.yaml: %w", err)
	}
	return b, nil
}

// addFiles renders the consumer's files and sample into files.
func (c consumer) addFiles(files map[string][]byte) error {
	own, err := render(c.files(), c)
	if err != nil {
		return err
	}
	for path, b := range own {
		files[path] = b
	}
	files[c.samplePath()], err = c.sample()
	return err
}

// note is the README's sentence on how go.mod requires the engine.
func (e engine) note() string {
	if e.dir == "" {
		return "`go.mod` requires the engine's release " + e.version + "."
	}
	return "`go.mod` takes the engine from the clone at `" + e.dir + "` (its `replace`) until a version of the engine is tagged; then `go mod edit -dropreplace " + EngineModule + " && go get " + EngineModule + "@<version>`."
}

// empty checks that dir is missing or empty.
func empty(dir string) error {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if len(entries) > 0 {
		return fmt.Errorf("%s is not empty: init writes a new project into a new or empty directory (onceflow add-consumer adds a consumer to a project)", dir)
	}
	return nil
}

// repositoryModule is the module path of the onceflow repository (the demo, the tools), which
// a project does not go into: its go.mod would make it a module nested in the repository's.
const repositoryModule = "github.com/onceflow/onceflow"

// outsideRepository checks that dir (absolute) is in no directory whose go.mod is the onceflow
// repository's.
func outsideRepository(dir string) error {
	for d := dir; ; d = filepath.Dir(d) {
		if m, err := modulePath(d); err == nil && m == repositoryModule {
			return fmt.Errorf("%s is inside the onceflow repository (%s): init writes a project of its own, outside it (onceflow init ../shop ...)", dir, d)
		}
		if filepath.Dir(d) == d {
			return nil
		}
	}
}

var notName = regexp.MustCompile(`[^a-z0-9]+`)

// projectName is base as a stack name: lower-case words joined by '-'.
func projectName(base string) string {
	name := strings.Trim(notName.ReplaceAllString(strings.ToLower(base), "-"), "-")
	if name == "" || name[0] < 'a' || name[0] > 'z' {
		name = "consumers-" + name
	}
	return strings.TrimSuffix(name, "-")
}

// modulePath is the module path of dir's go.mod.
func modulePath(dir string) (string, error) {
	b, err := os.ReadFile(filepath.Join(dir, "go.mod"))
	if err != nil {
		return "", fmt.Errorf("not a project onceflow init wrote: %w", err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if m, ok := strings.CutPrefix(strings.TrimSpace(line), "module "); ok {
			return strings.Trim(strings.TrimSpace(m), `"`), nil
		}
	}
	return "", fmt.Errorf("%s: no module line", filepath.Join(dir, "go.mod"))
}

// tidy completes dir's go.mod and writes its go.sum, as the module itself resolves (no
// workspace).
func tidy(ctx context.Context, dir string) error {
	cmd := exec.CommandContext(ctx, "go", "mod", "tidy")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOWORK=off")
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("the project is written, but go mod tidy in %s failed (it needs the module proxy for what the module cache lacks): run it there again: %w\n%s", dir, err, out)
	}
	return nil
}

func sortedKeys(m map[string][]byte) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
