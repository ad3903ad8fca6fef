package onceflow_test

import (
	"encoding/json"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/onceflow/onceflow/internal/app"
	"github.com/onceflow/onceflow/internal/config"
	"github.com/onceflow/onceflow/pkg/metrics"
)

// alarmTarget is what every alarm's AlarmActions and OKActions hold: the topic the stack
// creates, or the AlarmTopicArn parameter when it is set.
var alarmTarget = doc{"Fn::If": []any{"CreateAlarmTopic", doc{"Ref": "AlarmTopic"}, doc{"Ref": "AlarmTopicArn"}}}

// leasedFunctions are the functions whose consumer runs in lease mode
// (lease.Consumer, app.NewNoteNotifier): the ones that count metrics.LeaseTakeover.
var leasedFunctions = []string{"NoteNotifierFunction"}

// engineMetrics returns the values of the metric name constants of pkg/metrics, read from its
// source so that a metric added there is known here without a list to keep.
func engineMetrics(t *testing.T) map[string]bool {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), "pkg/metrics/metrics.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]bool{}
	for _, d := range f.Decls {
		g, ok := d.(*ast.GenDecl)
		if !ok || g.Tok != token.CONST {
			continue
		}
		for _, spec := range g.Specs {
			for _, v := range spec.(*ast.ValueSpec).Values {
				if lit, ok := v.(*ast.BasicLit); ok && lit.Kind == token.STRING {
					s, _ := strconv.Unquote(lit.Value)
					out[s] = true
				}
			}
		}
	}
	for _, m := range []string{metrics.Applied, metrics.Conflict, metrics.LeaseTakeover, metrics.CommitLatency, metrics.Parked} {
		if !out[m] {
			t.Fatalf("read %v from pkg/metrics/metrics.go; %q is missing", out, m)
		}
	}
	return out
}

// stackView is what the ops checks need to know of the template.
type stackView struct {
	tpl       doc
	functions map[string]doc
	consumers map[string]string // CONSUMER_NAME → function logical id
	relay     string            // the function reading the app table's stream to publish the outbox
	streams   []string          // every function reading a stream: the relay and the stream consumers
	terminal  []string          // queues a person reads: dead-letter, park and failure queues
}

func viewStack(t *testing.T) stackView {
	t.Helper()
	tpl := loadTemplate(t)
	v := stackView{tpl: tpl, functions: resourcesOfType(tpl, "AWS::Serverless::Function"), consumers: map[string]string{}}
	for id, fn := range v.functions {
		if name, ok := get(fn, "Properties", "Environment", "Variables", config.ConsumerName).(string); ok {
			v.consumers[name] = id
		}
		for _, ev := range get(fn, "Properties", "Events").(doc) {
			if get(ev, "Type") == "DynamoDB" {
				v.streams = append(v.streams, id)
				if _, consumer := get(fn, "Properties", "Environment", "Variables", config.ConsumerName).(string); !consumer {
					v.relay = id
				}
			}
			if d := refTarget(get(ev, "Properties", "DestinationConfig", "OnFailure", "Destination")); d != "" {
				v.terminal = append(v.terminal, d)
			}
		}
		if q := refTarget(get(fn, "Properties", "Environment", "Variables", config.OutboxParkQueueURL)); q != "" {
			v.terminal = append(v.terminal, q)
		}
	}
	for _, q := range resourcesOfType(tpl, "AWS::SQS::Queue") {
		if dl := refTarget(get(q, "Properties", "RedrivePolicy", "deadLetterTargetArn")); dl != "" {
			v.terminal = append(v.terminal, dl)
		}
	}
	if len(v.consumers) == 0 || v.relay == "" || len(v.terminal) == 0 {
		t.Fatalf("found consumers %v, relay %q, terminal queues %v; want all three", v.consumers, v.relay, v.terminal)
	}
	return v
}

func TestTemplate_every_alarm_notifies_the_alarm_topic_on_alarm_and_on_recovery(t *testing.T) {
	tpl := loadTemplate(t)
	if p := get(tpl, "Parameters", "AlarmTopicArn"); p == nil || get(p, "Default") != "" {
		t.Errorf("parameter AlarmTopicArn = %v; want one defaulting to empty", p)
	}
	if c := get(tpl, "Conditions", "CreateAlarmTopic"); !reflect.DeepEqual(c, doc{"Fn::Equals": []any{doc{"Ref": "AlarmTopicArn"}, ""}}) {
		t.Errorf("condition CreateAlarmTopic = %v; want AlarmTopicArn empty", c)
	}
	if topic := get(tpl, "Resources", "AlarmTopic"); get(topic, "Type") != "AWS::SNS::Topic" || get(topic, "Condition") != "CreateAlarmTopic" {
		t.Errorf("AlarmTopic = %v; want an SNS topic created when AlarmTopicArn is empty", topic)
	}
	alarms := resourcesOfType(tpl, "AWS::CloudWatch::Alarm")
	if len(alarms) == 0 {
		t.Fatal("no alarms")
	}
	for id, a := range alarms {
		for _, prop := range []string{"AlarmActions", "OKActions"} {
			if got := get(a, "Properties", prop); !reflect.DeepEqual(got, []any{alarmTarget}) {
				t.Errorf("%s.%s = %v; want [%v]", id, prop, got, alarmTarget)
			}
		}
	}
}

func TestTemplate_every_function_logs_to_its_own_group_with_a_retention(t *testing.T) {
	tpl := loadTemplate(t)
	p := get(tpl, "Parameters", "LogRetentionDays")
	if allowed, _ := get(p, "AllowedValues").([]any); !slices.Contains(allowed, get(p, "Default")) {
		t.Errorf("parameter LogRetentionDays = %v; want a default among the retentions CloudWatch Logs allows", p)
	}
	groups := map[string][]string{} // function → its log groups
	for id, g := range resourcesOfType(tpl, "AWS::Logs::LogGroup") {
		name, _ := get(g, "Properties", "LogGroupName", "Fn::Sub").(string)
		fn, ok := strings.CutPrefix(name, "/aws/lambda/${")
		if !ok {
			continue
		}
		fn = strings.TrimSuffix(fn, "}")
		groups[fn] = append(groups[fn], id)
		if r := get(g, "Properties", "RetentionInDays"); !reflect.DeepEqual(r, doc{"Ref": "LogRetentionDays"}) {
			t.Errorf("%s: RetentionInDays = %v; want !Ref LogRetentionDays", id, r)
		}
	}
	for id, fn := range resourcesOfType(tpl, "AWS::Serverless::Function") {
		if len(groups[id]) != 1 {
			t.Errorf("%s has log groups %v; want one named !Sub /aws/lambda/${%s}, where Lambda writes", id, groups[id], id)
		}
		// A LoggingConfig.LogGroup of its own would send the function's logs elsewhere.
		if lg := get(fn, "Properties", "LoggingConfig", "LogGroup"); lg != nil {
			t.Errorf("%s: LoggingConfig.LogGroup = %v; want Lambda's default group, the one with the retention", id, lg)
		}
	}
}

// engineDimension checks that an engine metric's dimension names what internal/app.Start
// gives it: Consumer=<CONSUMER_NAME> of a consumer, Function=<function> of another function.
func (v stackView) engineDimension(name, value string) error {
	switch name {
	case "Consumer":
		if _, ok := v.consumers[value]; !ok {
			return fmt.Errorf("Consumer=%s is no function's %s", value, config.ConsumerName)
		}
	case "Function":
		for id, fn := range v.functions {
			if kebab(id) == value && get(fn, "Properties", "Environment", "Variables", config.ConsumerName) == nil {
				return nil
			}
		}
		return fmt.Errorf("Function=%s names no function that is not a consumer", value)
	default:
		return fmt.Errorf("dimension %s: the engine's metrics carry Consumer or Function only", name)
	}
	return nil
}

func TestTemplate_alarms_cover_failures_throttles_relay_lag_dead_letters_conflicts_and_takeovers(t *testing.T) {
	v := viewStack(t)
	known := engineMetrics(t)
	watched := map[string]bool{} // "<namespace> <metric> <dimension value or logical id>"
	for id, a := range resourcesOfType(v.tpl, "AWS::CloudWatch::Alarm") {
		p := get(a, "Properties")
		ns, metric := fmt.Sprint(get(p, "Namespace")), fmt.Sprint(get(p, "MetricName"))
		if ns == app.Namespace && !known[metric] {
			t.Errorf("%s watches %s %s, a metric the engine does not emit", id, ns, metric)
		}
		for _, d := range get(p, "Dimensions").([]any) {
			value := refTarget(get(d, "Value"))
			if value == "" {
				value = fmt.Sprint(get(d, "Value"))
				if ns == app.Namespace {
					if err := v.engineDimension(fmt.Sprint(get(d, "Name")), value); err != nil {
						t.Errorf("%s: %v", id, err)
					}
				}
			}
			watched[ns+" "+metric+" "+value] = true
		}
	}
	var want []string
	for id := range v.functions {
		want = append(want, "AWS/Lambda Errors "+id, "AWS/Lambda Throttles "+id)
	}
	for _, id := range v.streams {
		want = append(want, "AWS/Lambda IteratorAge "+id)
	}
	for _, q := range v.terminal {
		want = append(want, "AWS/SQS ApproximateNumberOfMessagesVisible "+q)
	}
	want = append(want, app.Namespace+" "+metrics.AccessDenied+" "+kebab(v.relay))
	for name, id := range v.consumers {
		want = append(want, app.Namespace+" "+metrics.Conflict+" "+name, app.Namespace+" "+metrics.AccessDenied+" "+name)
		if slices.Contains(leasedFunctions, id) {
			want = append(want, app.Namespace+" "+metrics.LeaseTakeover+" "+name)
		}
	}
	for _, w := range want {
		if !watched[w] {
			t.Errorf("no alarm on %s", w)
		}
	}
}

// dashboardMetric is one line of a metric widget: namespace, metric name, dimension pairs, and
// an optional rendering object last.
type dashboardMetric []any

func (m dashboardMetric) parts() (ns, name string, dims [][2]string) {
	fields := make([]string, 0, len(m))
	for _, f := range m {
		if s, ok := f.(string); ok {
			fields = append(fields, s)
		}
	}
	if len(fields) < 2 {
		return "", "", nil
	}
	for i := 2; i+1 < len(fields); i += 2 {
		dims = append(dims, [2]string{fields[i], fields[i+1]})
	}
	return fields[0], fields[1], dims
}

func TestTemplate_dashboard_shows_metrics_the_engine_emits_for_resources_of_the_stack(t *testing.T) {
	v := viewStack(t)
	known := engineMetrics(t)
	dashboards := resourcesOfType(v.tpl, "AWS::CloudWatch::Dashboard")
	if len(dashboards) != 1 {
		t.Fatalf("%d dashboards; want one", len(dashboards))
	}
	var body string
	for _, d := range dashboards {
		body, _ = get(d, "Properties", "DashboardBody", "Fn::Sub").(string)
	}
	resources := get(v.tpl, "Resources").(doc)
	for _, ref := range regexp.MustCompile(`\$\{([^}]*)\}`).FindAllStringSubmatch(body, -1) {
		id, attr, _ := strings.Cut(ref[1], ".")
		if ref[1] != "AWS::Region" && (resources[id] == nil || (attr != "" && attr != "QueueName")) {
			t.Errorf("dashboard refers to ${%s}: want ${AWS::Region}, a resource or its QueueName", ref[1])
		}
	}
	var dash struct {
		Widgets []struct {
			Type       string
			Properties struct {
				Title, Region string
				Metrics       []dashboardMetric
			}
		}
	}
	if err := json.Unmarshal([]byte(body), &dash); err != nil {
		t.Fatalf("DashboardBody (a !Sub of JSON) does not parse: %v", err)
	}
	shown := map[string]bool{} // "<namespace> <metric> <dimension value>"
	for _, w := range dash.Widgets {
		if w.Type != "metric" {
			continue
		}
		if w.Properties.Region != "${AWS::Region}" {
			t.Errorf("widget %q: region %q; want ${AWS::Region}", w.Properties.Title, w.Properties.Region)
		}
		for _, m := range w.Properties.Metrics {
			ns, name, dims := m.parts()
			if ns == app.Namespace && !known[name] {
				t.Errorf("widget %q shows %s %s, a metric the engine does not emit", w.Properties.Title, ns, name)
			}
			for _, d := range dims {
				value := strings.TrimSuffix(strings.TrimPrefix(d[1], "${"), "}")
				if ns == app.Namespace {
					if err := v.engineDimension(d[0], d[1]); err != nil {
						t.Errorf("widget %q: %v", w.Properties.Title, err)
					}
				}
				shown[ns+" "+name+" "+value] = true
			}
		}
	}
	var want []string
	for _, id := range v.streams {
		want = append(want, "AWS/Lambda IteratorAge "+id)
	}
	for _, q := range v.terminal {
		want = append(want, "AWS/SQS ApproximateNumberOfMessagesVisible "+q+".QueueName")
	}
	for name := range v.consumers {
		for _, m := range []string{metrics.Applied, metrics.Duplicate, metrics.Rejected, metrics.DeadLettered, metrics.CommitLatency} {
			want = append(want, app.Namespace+" "+m+" "+name)
		}
	}
	for _, w := range want {
		if !shown[w] {
			t.Errorf("the dashboard does not show %s", w)
		}
	}
}
