package onceflow_test

import (
	"fmt"
	"os"
	"sort"
	"strings"
	"testing"

	"github.com/onceflow/onceflow/infra/localcloud"
)

// docs/local-cloud.md lists what the local cloud runs of SAM as the tables the cloud checks a
// template against (localcloud.SupportedResources and SupportedEvents): every resource type and
// event type, what each becomes, and each property emulated or accepted. Neither can change
// without the other.
func TestDocs_local_cloud_lists_what_it_runs_of_SAM_as_the_code_checks_it(t *testing.T) {
	b, err := os.ReadFile("docs/local-cloud.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, table := range []struct {
		head string
		rows []localcloud.Supported
	}{
		{"| resource type | becomes | emulated | accepted, not emulated |", localcloud.SupportedResources},
		{"| event type of `AWS::Serverless::Function` | becomes | emulated | accepted, not emulated |", localcloud.SupportedEvents},
	} {
		want := supportTable(table.head, table.rows)
		if !strings.Contains(string(b), want) {
			t.Errorf("docs/local-cloud.md does not have the table as the code has it; want:\n\n%s", want)
		}
	}
}

// supportTable renders rows as a Markdown table under head, properties in alphabetical order.
func supportTable(head string, rows []localcloud.Supported) string {
	var out strings.Builder
	fmt.Fprintf(&out, "%s\n|---|---|---|---|\n", head)
	for _, r := range rows {
		emulated, accepted := "none", "every property"
		if r.Properties != nil {
			emulated, accepted = supportNames(r.Properties, localcloud.Emulated), supportNames(r.Properties, localcloud.Accepted)
		}
		fmt.Fprintf(&out, "| `%s` | %s | %s | %s |\n", r.Type, r.Becomes, emulated, accepted)
	}
	return out.String()
}

func supportNames(props map[string]localcloud.Support, want localcloud.Support) string {
	var names []string
	for p, s := range props {
		if s == want {
			names = append(names, p)
		}
	}
	if len(names) == 0 {
		return "none"
	}
	sort.Strings(names)
	return "`" + strings.Join(names, "`, `") + "`"
}
