package onceflow_test

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
	"text/tabwriter"
	"time"

	"github.com/onceflow/onceflow/infra/localcloud"
	"github.com/onceflow/onceflow/infra/workload/workloadtest"
)

// TestLocalCloud_creates_what_the_translated_template_deploys starts the local cloud of
// template.yaml and compares what it runs with what the SAM translator says a deploy creates:
// where they differ, the local cloud is wrong. The AWS CLI then drives the same cloud
// (template_awscli_test.go), so that one start serves both.
func TestLocalCloud_creates_what_the_translated_template_deploys(t *testing.T) {
	tpl := translated(t)
	if os.Getenv("DYNAMODB_ENDPOINT") == "" || os.Getenv("SQS_ENDPOINT") == "" {
		t.Fatal("DYNAMODB_ENDPOINT and SQS_ENDPOINT are not set: run `make test`, or `infra/emulators.sh go test .`")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	// The template's own visibility timeouts, not the shorter ones other tests run with.
	cloud := workloadtest.Start(ctx, t, "template.yaml", "sam", func(cfg *localcloud.Config) { cfg.VisibilityTimeout = 0 })
	tr := newTranslation(t, tpl, cloud.Endpoints(), nil)

	t.Run("event source mappings", func(t *testing.T) { compareMappings(t, tr.on(t), cloud.Cloud) })
	t.Run("functions", func(t *testing.T) { compareFunctions(t, tr.on(t), cloud.Cloud) })
	t.Run("queues", func(t *testing.T) { compareQueues(ctx, t, tr.on(t), cloud.Endpoints()) })
	t.Run("tables", func(t *testing.T) { compareTables(ctx, t, tr.on(t), cloud.Endpoints()) })
	t.Run("http api", func(t *testing.T) { compareRoutes(t, tr.on(t), cloud.Cloud) })
	t.Run("AWS CLI", func(t *testing.T) { driveWithAWSCLI(ctx, t, cloud) })
}

// translation is the translated template with its intrinsic functions resolved the way the
// local cloud resolves them: references to the local resources, parameters to their defaults
// and overrides, conditions evaluated.
type translation struct {
	t      *testing.T
	doc    doc
	params map[string]string
	local  localcloud.Endpoints
}

func newTranslation(t *testing.T, tpl doc, local localcloud.Endpoints, overrides map[string]string) *translation {
	params := map[string]string{}
	for name, p := range get(tpl, "Parameters").(doc) {
		if d := get(p, "Default"); d != nil {
			params[name] = scalarString(d)
		}
	}
	maps.Copy(params, overrides)
	return &translation{t: t, doc: tpl, params: params, local: local}
}

// on returns the translation reporting to test t.
func (tr translation) on(t *testing.T) *translation {
	tr.t = t
	return &tr
}

// localEndpointsNone is no local cloud: for resolving what refers to no resource.
var localEndpointsNone localcloud.Endpoints

// noValue is AWS::NoValue: a key or an item resolving to it is removed.
type noValue struct{}

func (tr *translation) resolve(v any) any {
	switch x := v.(type) {
	case doc:
		if len(x) == 1 {
			for fn, arg := range x {
				switch fn {
				case "Ref":
					return tr.ref(fmt.Sprint(arg))
				case "Fn::GetAtt":
					l := arg.([]any)
					return tr.getAtt(fmt.Sprint(l[0]), fmt.Sprint(l[1]))
				case "Fn::If":
					l := arg.([]any)
					if tr.condition(fmt.Sprint(l[0])) {
						return tr.resolve(l[1])
					}
					return tr.resolve(l[2])
				}
			}
		}
		out := doc{}
		for k, c := range x {
			if r := tr.resolve(c); r != (noValue{}) {
				out[k] = r
			}
		}
		return out
	case []any:
		var out []any
		for _, c := range x {
			if r := tr.resolve(c); r != (noValue{}) {
				out = append(out, r)
			}
		}
		return out
	}
	return v
}

func (tr *translation) ref(name string) any {
	if name == "AWS::NoValue" {
		return noValue{}
	}
	if v, ok := tr.params[name]; ok {
		return v
	}
	if tb, ok := tr.local.Tables[name]; ok {
		return tb.Name
	}
	if q, ok := tr.local.Queues[name]; ok {
		return q.URL
	}
	if get(tr.doc, "Resources", name, "Type") == "AWS::Lambda::Function" {
		return name
	}
	tr.t.Fatalf("!Ref %s: nothing of the local cloud to compare it with", name)
	return nil
}

func (tr *translation) getAtt(name, attr string) string {
	if q, ok := tr.local.Queues[name]; ok && attr == "Arn" {
		return q.ARN
	}
	if tb, ok := tr.local.Tables[name]; ok {
		switch attr {
		case "Arn":
			return tb.ARN
		case "StreamArn":
			return tb.StreamARN
		}
	}
	tr.t.Fatalf("!GetAtt %s.%s: nothing of the local cloud to compare it with", name, attr)
	return ""
}

// condition evaluates a condition of the template (Fn::Equals, Fn::Not, Fn::And, Fn::Or,
// Condition).
func (tr *translation) condition(name string) bool {
	c := get(tr.doc, "Conditions", name)
	if c == nil {
		tr.t.Fatalf("condition %s is not declared", name)
	}
	return tr.eval(c)
}

func (tr *translation) eval(c any) bool {
	for fn, arg := range asMap(c) {
		l, _ := arg.([]any)
		switch fn {
		case "Condition":
			return tr.condition(fmt.Sprint(arg))
		case "Fn::Equals":
			return fmt.Sprint(tr.resolve(l[0])) == fmt.Sprint(tr.resolve(l[1]))
		case "Fn::Not":
			return !tr.eval(l[0])
		case "Fn::And":
			return !slices.ContainsFunc(l, func(c any) bool { return !tr.eval(c) })
		case "Fn::Or":
			return slices.ContainsFunc(l, tr.eval)
		}
	}
	tr.t.Fatalf("condition %v: not a condition function", c)
	return false
}

// mapping is an event source mapping's settings, as a deploy creates it or the local cloud
// runs it.
type mapping struct {
	Function, Source          string // logical ids
	BatchSize, BatchingWindow int
	MaxConcurrency            int
	MinPollers, MaxPollers    int
	ResponseTypes, Filters    string
	OnFailure                 string // logical id of the destination queue
	MaxRetries, MaxRecordAge  int
	Bisect                    bool
	StartingPosition          string
}

// translatedMappings reads the AWS::Lambda::EventSourceMapping resources, AWS's defaults
// applied where a property is absent.
func translatedMappings(tr *translation) []mapping {
	var out []mapping
	for _, r := range resourcesOfType(tr.doc, "AWS::Lambda::EventSourceMapping") {
		p := asMap(tr.resolve(get(r, "Properties")))
		raw := get(r, "Properties")
		m := mapping{Function: fmt.Sprint(p["FunctionName"]), Source: refTarget(get(raw, "EventSourceArn")),
			BatchSize: num(p["BatchSize"]), BatchingWindow: num(p["MaximumBatchingWindowInSeconds"]),
			MaxConcurrency: num(get(p, "ScalingConfig", "MaximumConcurrency")),
			MinPollers:     num(get(p, "ProvisionedPollerConfig", "MinimumPollers")),
			MaxPollers:     num(get(p, "ProvisionedPollerConfig", "MaximumPollers")),
			ResponseTypes:  fmt.Sprint(p["FunctionResponseTypes"]), Filters: patterns(get(p, "FilterCriteria", "Filters")),
			OnFailure:  refTarget(get(raw, "DestinationConfig", "OnFailure", "Destination")),
			MaxRetries: -1, MaxRecordAge: -1, Bisect: get(p, "BisectBatchOnFunctionError") == true}
		if v, ok := p["MaximumRetryAttempts"]; ok {
			m.MaxRetries = num(v)
		}
		if v, ok := p["MaximumRecordAgeInSeconds"]; ok {
			m.MaxRecordAge = num(v)
		}
		source, _ := get(raw, "EventSourceArn", "Fn::GetAtt").([]any)
		stream := len(source) == 2 && source[1] == "StreamArn"
		if stream {
			m.StartingPosition = fmt.Sprint(p["StartingPosition"])
		}
		if m.BatchSize == 0 {
			m.BatchSize = map[bool]int{true: 100, false: 10}[stream]
		}
		out = append(out, m)
	}
	return sortMappings(out)
}

// localMappings reads the event sources the local cloud polls.
func localMappings(c *localcloud.Cloud) []mapping {
	queueID := map[string]string{}
	for id, q := range c.Endpoints().Queues {
		queueID[q.ARN] = id
	}
	var out []mapping
	for id, f := range c.Functions() {
		for _, ev := range f.Events {
			if ev.Type != localcloud.EventSQS && ev.Type != localcloud.EventDynamoDB {
				continue
			}
			var filters []any
			b, _ := json.Marshal(ev.Filter)
			_ = json.Unmarshal(b, &filters)
			var pats []any
			for _, f := range filters {
				s, _ := json.Marshal(f)
				pats = append(pats, doc{"Pattern": string(s)})
			}
			m := mapping{Function: id, Source: ev.Source, BatchSize: ev.BatchSize, BatchingWindow: ev.BatchingWindow,
				MaxConcurrency: ev.MaxConcurrency, MinPollers: ev.MinPollers, MaxPollers: ev.MaxPollers,
				Filters: patterns(pats), OnFailure: queueID[ev.OnFailure], MaxRetries: ev.MaxRetries,
				MaxRecordAge: ev.MaxRecordAge, Bisect: ev.Bisect, ResponseTypes: "[]"}
			if ev.ReportFailures {
				m.ResponseTypes = "[ReportBatchItemFailures]"
			}
			if ev.Type == localcloud.EventDynamoDB {
				m.StartingPosition = ev.StartingPosition
			}
			out = append(out, m)
		}
	}
	return sortMappings(out)
}

// patterns writes filter patterns in one canonical form (JSON, keys sorted).
func patterns(filters any) string {
	var out []string
	for _, f := range asList(filters) {
		var v any
		if err := json.Unmarshal([]byte(fmt.Sprint(get(f, "Pattern"))), &v); err != nil {
			out = append(out, "unreadable: "+fmt.Sprint(get(f, "Pattern")))
			continue
		}
		b, _ := json.Marshal(v)
		out = append(out, string(b))
	}
	return strings.Join(out, " | ")
}

func sortMappings(ms []mapping) []mapping {
	slices.SortFunc(ms, func(a, b mapping) int { return strings.Compare(a.Function+a.Source, b.Function+b.Source) })
	return ms
}

func compareMappings(t *testing.T, tr *translation, c *localcloud.Cloud) {
	want, got := translatedMappings(tr), localMappings(c)
	if len(want) == 0 {
		t.Fatal("the translation has no event source mappings")
	}
	if !reflect.DeepEqual(want, got) {
		t.Errorf("the local cloud's event source mappings differ from the translation's:\n%s", sideBySide(want, got))
		return
	}
	t.Logf("every event source mapping, the translation's beside the local cloud's:\n%s", sideBySide(want, got))
}

// sideBySide prints each mapping's fields, the translation's beside the local cloud's.
func sideBySide(want, got []mapping) string {
	var b strings.Builder
	w := tabwriter.NewWriter(&b, 2, 4, 2, ' ', 0)
	for i := range max(len(want), len(got)) {
		var tv, lv reflect.Value
		if i < len(want) {
			tv = reflect.ValueOf(want[i])
		}
		if i < len(got) {
			lv = reflect.ValueOf(got[i])
		}
		fmt.Fprintln(w, "field\ttranslation\tlocal cloud\t")
		for f := range reflect.TypeFor[mapping]().NumField() {
			name := reflect.TypeFor[mapping]().Field(f).Name
			a, l := "-", "-"
			if tv.IsValid() {
				a = fmt.Sprint(tv.Field(f))
			}
			if lv.IsValid() {
				l = fmt.Sprint(lv.Field(f))
			}
			mark := ""
			if a != l {
				mark = "<- differs"
			}
			fmt.Fprintf(w, "%s\t%s\t%s\t%s\n", name, a, l, mark)
		}
		fmt.Fprintln(w, "\t\t\t")
	}
	w.Flush()
	return b.String()
}

func compareFunctions(t *testing.T, tr *translation, c *localcloud.Cloud) {
	local := c.Functions()
	fns := resourcesOfType(tr.doc, "AWS::Lambda::Function")
	if len(fns) != len(local) {
		t.Errorf("the translation deploys %d functions, the local cloud runs %d", len(fns), len(local))
	}
	for id, fn := range fns {
		f, ok := local[id]
		if !ok {
			t.Errorf("%s: not run by the local cloud", id)
			continue
		}
		props := asMap(get(fn, "Properties"))
		p := asMap(tr.resolve(doc{"Timeout": props["Timeout"], "MemorySize": props["MemorySize"],
			"Environment": props["Environment"], "LoggingConfig": props["LoggingConfig"]}))
		timeout, memory := num(p["Timeout"]), num(p["MemorySize"])
		if timeout == 0 {
			timeout = 3
		}
		if memory == 0 {
			memory = 128
		}
		if f.Timeout != timeout || f.MemorySize != memory {
			t.Errorf("%s: timeout %d s, memory %d MB locally; the translation's are %d s, %d MB", id, f.Timeout, f.MemorySize, timeout, memory)
		}
		env := map[string]string{}
		for k, v := range asMap(get(p, "Environment", "Variables")) {
			env[k] = fmt.Sprint(v)
		}
		if !maps.Equal(env, f.Env) {
			t.Errorf("%s: environment locally\n  %v\nthe translation's\n  %v", id, f.Env, env)
		}
		if want := fmt.Sprint(get(p, "LoggingConfig", "LogFormat")); f.LogFormat != want {
			t.Errorf("%s: log format %q locally; the translation's is %q", id, f.LogFormat, want)
		}
	}
}

func compareRoutes(t *testing.T, tr *translation, c *localcloud.Cloud) {
	var want []localcloud.Route
	fnOf := regexp.MustCompile(`\$\{(\w+)\.Arn\}`)
	for _, api := range resourcesOfType(tr.doc, "AWS::ApiGatewayV2::Api") {
		body := get(api, "Properties", "Body")
		schemes := asMap(get(body, "components", "securitySchemes"))
		for path, ops := range asMap(get(body, "paths")) {
			for method, op := range asMap(ops) {
				r := localcloud.Route{Key: strings.ToUpper(method) + " " + path}
				if m := fnOf.FindStringSubmatch(fmt.Sprint(get(op, "x-amazon-apigateway-integration", "uri", "Fn::Sub"))); m != nil {
					r.Function = m[1]
				}
				for _, sec := range asList(get(op, "security")) {
					for name := range asMap(sec) {
						// the issuer is the local one by design: only the audience is compared
						az := asMap(get(schemes, name, "x-amazon-apigateway-authorizer"))
						r.Authorizer, r.Header = name, strings.TrimPrefix(fmt.Sprint(az["identitySource"]), "$request.header.")
						for _, a := range asList(get(az, "jwtConfiguration", "audience")) {
							r.Audience = append(r.Audience, fmt.Sprint(tr.resolve(a)))
						}
					}
				}
				want = append(want, r)
			}
		}
	}
	got := c.Routes()
	byKey := func(a, b localcloud.Route) int { return strings.Compare(a.Key, b.Key) }
	slices.SortFunc(want, byKey)
	slices.SortFunc(got, byKey)
	if len(want) == 0 || !reflect.DeepEqual(want, got) {
		t.Errorf("routes differ:\ntranslation  %+v\nlocal cloud  %+v", want, got)
	}
}
