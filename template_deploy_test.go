package onceflow_test

import (
	"fmt"
	"maps"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/onceflow/onceflow/infra/localcloud"
	"github.com/onceflow/onceflow/infra/sam/samtest"
)

// AuthIssuer has no issuer to default to: a deploy without it stops before anything changes,
// with the rule's description, which names it, says where it goes and what a Cognito user
// pool's looks like. samconfig.toml's live lines leave it out (it is the deploying team's),
// so they are refused; its first-deploy example passes.
func TestTemplate_a_deploy_without_AuthIssuer_stops_saying_what_to_set(t *testing.T) {
	tpl := translated(t)
	refusals := func(params map[string]string) []string {
		return samtest.NewResolver(t, tpl, localcloud.Endpoints{}, params).Refusals()
	}
	got := refusals(nil)
	if len(got) != 1 {
		t.Fatalf("a deploy with the defaults is refused with %q; want one refusal, of AuthIssuer", got)
	}
	for _, want := range []string{"AuthIssuer is not set", `AuthIssuer="https://...`, "cognito-idp.<region>.amazonaws.com/<user pool id>", "samconfig.toml", "docs/deploy.md"} {
		if !strings.Contains(got[0], want) {
			t.Errorf("the refusal %q does not say %q", got[0], want)
		}
	}
	live, example := samconfigOverrides(t)
	for env, params := range live {
		if got := refusals(params); len(got) != 1 || !strings.Contains(got[0], "AuthIssuer is not set") {
			t.Errorf("samconfig.toml's %s parameter_overrides %v: refused with %q; want AuthIssuer's refusal", env, params, got)
		}
	}
	if got := refusals(example); len(got) != 0 {
		t.Errorf("samconfig.toml's first-deploy example %v is refused: %q", example, got)
	}
}

// samconfigOverrides returns the parameter_overrides of samconfig.toml: each environment's
// live line, and the commented first-deploy example.
func samconfigOverrides(t *testing.T) (live map[string]map[string]string, example map[string]string) {
	t.Helper()
	raw, err := os.ReadFile("samconfig.toml")
	if err != nil {
		t.Fatal(err)
	}
	live = map[string]map[string]string{}
	env := ""
	for _, line := range strings.Split(string(raw), "\n") {
		if m := samconfigSection.FindStringSubmatch(line); m != nil {
			env = m[1]
		}
		if m := samconfigOverride.FindStringSubmatch(line); m != nil {
			params := map[string]string{}
			for _, kv := range overridePair.FindAllStringSubmatch(m[2], -1) {
				params[kv[1]] = kv[2]
			}
			if m[1] == "" {
				live[env] = params
			} else if example == nil {
				example = params
			}
		}
	}
	if len(live) == 0 || example == nil {
		t.Fatalf("samconfig.toml: parameter_overrides of %v, example %v; want each environment's and a commented first-deploy example", slices.Sorted(maps.Keys(live)), example)
	}
	return live, example
}

var (
	samconfigSection  = regexp.MustCompile(`^\[(\w+)\.deploy\.parameters\]`)
	samconfigOverride = regexp.MustCompile(`^(#\s*)?parameter_overrides\s*=\s*"(.*)"\s*$`)
	overridePair      = regexp.MustCompile(`(\w+)=\\"([^\\]*)\\"`)
)

// docs/deploy.md states what the first deploy creates: the translation's resource count, how
// many of them a deploy with the defaults creates, and a table with the count of each type.
// They are the translator's, so the page cannot drift from the template.
func TestDocs_deploy_states_the_resources_the_translation_has(t *testing.T) {
	page := readPage(t, "docs/deploy.md")
	tpl := translated(t)
	res, _ := get(tpl, "Resources").(doc)
	byType := map[string]int{}
	defaults := 0
	r := samtest.NewResolver(t, tpl, localcloud.Endpoints{}, nil)
	for id, v := range res {
		byType[fmt.Sprint(get(v, "Type"))]++
		if r.Creates(id) {
			defaults++
		}
	}
	stated := func(re *regexp.Regexp) int {
		m := re.FindStringSubmatch(page)
		if m == nil {
			t.Fatalf("docs/deploy.md no longer says %q", re)
		}
		n, _ := strconv.Atoi(m[1])
		return n
	}
	if n := stated(statedTotal); n != len(res) {
		t.Errorf("docs/deploy.md says the translation has %d resources; the SAM translator makes %d", n, len(res))
	}
	if n := stated(statedDefaults); n != defaults {
		t.Errorf("docs/deploy.md says a deploy with the defaults creates %d; their Conditions create %d", n, defaults)
	}
	rows := statedType.FindAllStringSubmatch(page, -1)
	table := map[string]int{}
	for _, m := range rows {
		table[m[1]], _ = strconv.Atoi(m[2])
	}
	for _, typ := range slices.Sorted(maps.Keys(byType)) {
		if table[typ] != byType[typ] {
			t.Errorf("docs/deploy.md counts %d %s; the translation has %d", table[typ], typ, byType[typ])
		}
	}
	for typ := range table {
		if byType[typ] == 0 {
			t.Errorf("docs/deploy.md counts %s, which the translation does not have", typ)
		}
	}
}

var (
	statedTotal    = regexp.MustCompile(`The translation has (\d+) resources`)
	statedDefaults = regexp.MustCompile(`with the default parameters the first deploy creates (\d+)`)
	statedType     = regexp.MustCompile("(?m)^\\| `(AWS::\\w+::\\w+)` \\| (\\d+) \\|")
)

// docs/deploy.md's table of parameters has a row for each of the template's, with its default
// (`""` for an empty one), and none other.
func TestDocs_deploy_lists_every_parameter_with_its_default(t *testing.T) {
	page := readPage(t, "docs/deploy.md")
	rows := map[string]string{}
	for _, m := range parameterRow.FindAllStringSubmatch(page, -1) {
		rows[m[1]] = m[2]
	}
	params, _ := get(loadTemplate(t), "Parameters").(doc)
	for _, name := range slices.Sorted(maps.Keys(params)) {
		want := fmt.Sprint(get(params, name, "Default"))
		if want == "" {
			want = `""`
		}
		got, ok := rows[name]
		switch {
		case !ok:
			t.Errorf("docs/deploy.md does not list the parameter %s", name)
		case got != want:
			t.Errorf("docs/deploy.md gives %s the default %s; the template's is %s", name, got, want)
		}
	}
	for name := range rows {
		if params[name] == nil {
			t.Errorf("docs/deploy.md lists %s, which the template does not declare", name)
		}
	}
}

// docs/deploy.md asks for the SAM CLI version the Makefile's check asks for.
func TestDocs_deploy_names_the_SAM_CLI_version_the_Makefile_checks(t *testing.T) {
	m := regexp.MustCompile(`(?m)^SAM_MIN\s*:=\s*(\S+)$`).FindStringSubmatch(readPage(t, "Makefile"))
	if m == nil {
		t.Fatal("the Makefile sets no SAM_MIN")
	}
	page := readPage(t, "docs/deploy.md")
	for _, want := range []string{"| the SAM CLI | " + m[1] + " or later |", "SAM CLI, version " + m[1] + " or later"} {
		if !strings.Contains(page, want) {
			t.Errorf("docs/deploy.md does not say %q: the Makefile checks for the SAM CLI %s", want, m[1])
		}
	}
}

var parameterRow = regexp.MustCompile("(?m)^\\| `(\\w+)` \\| `([^`]*)` \\|")

func readPage(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
