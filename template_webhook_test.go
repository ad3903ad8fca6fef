package onceflow_test

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// The webhook URL and signing secret are secrets: the template holds only the names of their
// SSM parameters, gives the names to the note-notifier, and lets it (and nothing else) read
// exactly those two parameters, as the translated roles deploy it.
func TestTemplate_webhook_url_and_secret_come_from_parameter_store_names(t *testing.T) {
	tpl := translated(t)
	for name := range get(tpl, "Parameters").(doc) {
		if strings.Contains(strings.ToLower(name), "webhook") && !strings.HasSuffix(name, "ParameterName") {
			t.Errorf("parameter %s: the template takes webhook parameter names, never their values", name)
		}
	}
	want := map[string]string{"WEBHOOK_URL_PARAMETER": "WebhookUrlParameterName", "WEBHOOK_SECRET_PARAMETER": "WebhookSecretParameterName"}
	var arns []string
	for env, param := range want {
		p, _ := get(tpl, "Parameters", param).(doc)
		pattern, _ := p["AllowedPattern"].(string)
		def, _ := p["Default"].(string)
		if p == nil || !strings.HasPrefix(pattern, "(/") || !regexp.MustCompile("^(?:"+pattern+")$").MatchString(def) {
			t.Errorf("parameter %s = %v; want a String whose pattern requires a leading / (the ARN below relies on it)", param, p)
		}
		if got := refTarget(get(tpl, "Resources", "NoteNotifierFunction", "Properties", "Environment", "Variables", env)); got != param {
			t.Errorf("NoteNotifierFunction %s = !Ref %q; want !Ref %s", env, got, param)
		}
		arns = append(arns, fmt.Sprintf("arn:${AWS::Partition}:ssm:${AWS::Region}:${AWS::AccountId}:parameter${%s}", param))
	}
	for id, fn := range resourcesOfType(tpl, "AWS::Lambda::Function") {
		for k := range asMap(get(fn, "Properties", "Environment", "Variables")) {
			if k == "WEBHOOK_URL" || k == "WEBHOOK_SECRET" {
				t.Errorf("%s sets %s: a secret in the environment", id, k)
			}
		}
		var read []string
		for _, st := range allStatements(t, tpl, id) {
			for _, a := range asList(get(st, "Action")) {
				if !strings.HasPrefix(fmt.Sprint(a), "ssm:") {
					continue
				}
				if a != "ssm:GetParameter" {
					t.Errorf("%s may %s; want ssm:GetParameter only", id, a)
				}
				for _, r := range asList(get(st, "Resource")) {
					read = append(read, fmt.Sprint(get(r, "Fn::Sub")))
				}
			}
		}
		slices.Sort(read)
		if id != "NoteNotifierFunction" && len(read) > 0 {
			t.Errorf("%s may read SSM parameters %v; only the note-notifier reads the webhook's", id, read)
		}
		if id == "NoteNotifierFunction" && !slices.Equal(read, slices.Sorted(slices.Values(arns))) {
			t.Errorf("NoteNotifierFunction may read %v; want exactly %v", read, slices.Sorted(slices.Values(arns)))
		}
	}
}

func asMap(v any) doc {
	m, _ := v.(doc)
	return m
}
