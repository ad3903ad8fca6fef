package localcloud_test

import (
	"strings"
	"testing"

	"github.com/onceflow/onceflow/infra/localcloud"
)

const overridesTemplate = `
Parameters:
  Stage: {Type: String, Default: dev, AllowedPattern: "[a-z0-9-]+"}
  RetentionDays: {Type: Number, Default: 30, MinValue: 23, MaxValue: 400}
  LogLevel: {Type: String, Default: info, AllowedValues: [debug, info, warn, error]}
  Name: {Type: String, MinLength: 2, MaxLength: 4, ConstraintDescription: two to four letters}
Resources:
  LedgerFunction: {Type: AWS::Serverless::Function, Properties: {CodeUri: .}}
  ApiFunction: {Type: AWS::Serverless::Function, Properties: {CodeUri: .}}
`

func TestCheckOverrides_refuses_what_the_template_would_refuse(t *testing.T) {
	tmpl, err := localcloud.ParseTemplate([]byte(overridesTemplate))
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name   string
		envs   map[string]int
		params map[string]string
		want   []string // substrings of the error; none: accepted
	}{
		{"template values", map[string]int{"LedgerFunction": 3}, map[string]string{"LogLevel": "debug", "Stage": "prod-1", "RetentionDays": "23", "Name": "abc"}, nil},
		{"unknown function listed with the valid ones", map[string]int{"Consumer": 3}, nil,
			[]string{`no function "Consumer"`, "ApiFunction, LedgerFunction"}},
		{"unknown parameter listed with the declared ones", nil, map[string]string{"Loglevel": "debug"},
			[]string{`no parameter "Loglevel"`, "LogLevel, Name, RetentionDays, Stage"}},
		{"value outside AllowedValues", nil, map[string]string{"LogLevel": "verbose"},
			[]string{`LogLevel="verbose"`, "debug, info, warn, error"}},
		{"value not matching AllowedPattern as a whole", nil, map[string]string{"Stage": "Prod"},
			[]string{`Stage="Prod"`, "[a-z0-9-]+"}},
		{"number below MinValue", nil, map[string]string{"RetentionDays": "7"}, []string{`RetentionDays="7"`, "at least 23"}},
		{"number above MaxValue", nil, map[string]string{"RetentionDays": "401"}, []string{"at most 400"}},
		{"not a number", nil, map[string]string{"RetentionDays": "thirty"}, []string{"not a number"}},
		{"too long, with the constraint description", nil, map[string]string{"Name": "abcde"},
			[]string{"at most 4 characters", "two to four letters"}},
		{"every problem at once", map[string]int{"X": 1}, map[string]string{"LogLevel": "x", "Y": "1"},
			[]string{`no function "X"`, `LogLevel="x"`, `no parameter "Y"`}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := tmpl.CheckOverrides(c.envs, c.params)
			if len(c.want) == 0 {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("accepted; want an error with %q", c.want)
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
		})
	}
}

func TestResolveFunction_accepts_a_logical_id_or_a_short_name(t *testing.T) {
	ids := []string{"LedgerFunction", "NoteTaggerFunction", "SQSConsumer"}
	for name, want := range map[string]string{"LedgerFunction": "LedgerFunction", "ledger": "LedgerFunction",
		"note-tagger": "NoteTaggerFunction", "sqs-consumer": "SQSConsumer"} {
		if got, err := localcloud.ResolveFunction(ids, name); err != nil || got != want {
			t.Errorf("ResolveFunction(%q) = %q, %v; want %q", name, got, err, want)
		}
	}
	_, err := localcloud.ResolveFunction(ids, "consumer")
	if err == nil || !strings.Contains(err.Error(), "LedgerFunction, NoteTaggerFunction, SQSConsumer") {
		t.Errorf("unknown name: %v; want the valid list", err)
	}
}
