package onceflow_test

import (
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/onceflow/onceflow/infra/localcloud"
	"github.com/onceflow/onceflow/internal/config"
	"github.com/onceflow/onceflow/pkg/port"
)

// doc is template.yaml as CloudFormation reads it, with its short-form intrinsics in their long
// forms ({"Ref": x}, {"Fn::GetAtt": [a, b]}, {"Fn::Sub": s}, ...): the local cloud's reader.
type doc = map[string]any

func loadTemplate(t *testing.T) doc {
	t.Helper()
	tpl, err := localcloud.LoadDocument("template.yaml")
	if err != nil {
		t.Fatal(err)
	}
	return tpl
}

func get(v any, path ...string) any {
	for _, p := range path {
		m, ok := v.(doc)
		if !ok {
			return nil
		}
		v = m[p]
	}
	return v
}

func num(v any) int {
	switch n := v.(type) {
	case int:
		return n
	case float64: // a JSON number (the translation)
		return int(n)
	case string:
		i, _ := strconv.Atoi(strings.TrimSpace(n)) // not a number: 0, as for any other type
		return i
	}
	return 0
}

func resourcesOfType(tpl doc, typ string) map[string]doc {
	out := map[string]doc{}
	for id, r := range get(tpl, "Resources").(doc) {
		if get(r, "Type") == typ {
			out[id] = r.(doc)
		}
	}
	return out
}

// refTarget returns the logical id a {"Ref"} or {"Fn::GetAtt"} points at.
func refTarget(v any) string {
	if s, ok := get(v, "Ref").(string); ok {
		return s
	}
	if l, ok := get(v, "Fn::GetAtt").([]any); ok && len(l) > 0 {
		return l[0].(string)
	}
	return ""
}

func functionTimeout(tpl doc, fn doc) int {
	if t := get(fn, "Properties", "Timeout"); t != nil {
		return num(t)
	}
	return num(get(tpl, "Globals", "Function", "Timeout"))
}

func TestTemplate_has_every_resource_the_application_needs(t *testing.T) {
	tpl := loadTemplate(t)
	want := map[string]string{
		"ApiFunction": "AWS::Serverless::Function", "OutboxRelayFunction": "AWS::Serverless::Function",
		"NoteTaggerFunction": "AWS::Serverless::Function", "LedgerFunction": "AWS::Serverless::Function",
		"AppTable": "AWS::DynamoDB::Table", "IdempotencyTable": "AWS::DynamoDB::Table",
		"NotesQueue": "AWS::SQS::Queue", "NotesDeadLetterQueue": "AWS::SQS::Queue",
		"LedgerQueue": "AWS::SQS::Queue", "LedgerDeadLetterQueue": "AWS::SQS::Queue",
		"NoteNotifierFunction": "AWS::Serverless::Function",
		"NotificationsQueue":   "AWS::SQS::Queue", "NotificationsDeadLetterQueue": "AWS::SQS::Queue",
	}
	for id, typ := range want {
		if got := get(tpl, "Resources", id, "Type"); got != typ {
			t.Errorf("resource %s has type %v; want %s", id, got, typ)
		}
	}
	for _, p := range []string{"Stage", "RetentionDays", "LogLevel", "WebhookUrlParameterName", "WebhookSecretParameterName"} {
		if get(tpl, "Parameters", p) == nil {
			t.Errorf("parameter %s is missing", p)
		}
	}
	g := get(tpl, "Globals", "Function")
	if get(g, "Runtime") != "provided.al2023" || !slices.Equal(get(g, "Architectures").([]any), []any{"arm64"}) ||
		get(g, "Handler") != "bootstrap" || get(g, "Tracing") != "Active" || get(g, "LoggingConfig", "LogFormat") != "JSON" {
		t.Errorf("Globals.Function = %v; want provided.al2023, arm64, bootstrap, tracing, JSON logs", g)
	}
	for _, o := range []string{"ApiUrl", "NotesQueueUrl", "LedgerQueueUrl", "NotificationsQueueUrl", "AppTableName", "IdempotencyTableName"} {
		if get(tpl, "Outputs", o) == nil {
			t.Errorf("output %s is missing", o)
		}
	}
}

func TestTemplate_tables_are_on_demand_encrypted_recoverable_with_ttl(t *testing.T) {
	tpl := loadTemplate(t)
	for id, tbl := range resourcesOfType(tpl, "AWS::DynamoDB::Table") {
		p := get(tbl, "Properties")
		if get(p, "BillingMode") != "PAY_PER_REQUEST" || get(p, "SSESpecification", "SSEEnabled") != true ||
			get(p, "PointInTimeRecoverySpecification", "PointInTimeRecoveryEnabled") != true {
			t.Errorf("%s: want on-demand, SSE and point-in-time recovery", id)
		}
		if get(p, "TimeToLiveSpecification", "Enabled") != true || get(p, "TimeToLiveSpecification", "AttributeName") != "expiresAt" {
			t.Errorf("%s: want TTL on expiresAt", id)
		}
		// Losing the idempotency records to a stack deletion or replacement would let every
		// redelivery apply its event again.
		if get(tbl, "DeletionPolicy") != "Retain" || get(tbl, "UpdateReplacePolicy") != "Retain" {
			t.Errorf("%s: want DeletionPolicy and UpdateReplacePolicy Retain", id)
		}
	}
	if got := get(tpl, "Resources", "AppTable", "Properties", "StreamSpecification", "StreamViewType"); got != "NEW_IMAGE" {
		t.Errorf("AppTable stream view = %v; want NEW_IMAGE", got)
	}
}

func TestTemplate_every_queue_has_a_dead_letter_queue_of_the_same_kind(t *testing.T) {
	tpl := loadTemplate(t)
	queues := resourcesOfType(tpl, "AWS::SQS::Queue")
	terminal := map[string]bool{} // dead-letter queues and failure destinations
	for _, q := range queues {
		if dl := refTarget(get(q, "Properties", "RedrivePolicy", "deadLetterTargetArn")); dl != "" {
			terminal[dl] = true
		}
	}
	// The relay's park queue is read by a person, like a dead-letter queue.
	terminal[refTarget(get(tpl, "Resources", "OutboxRelayFunction", "Properties", "Environment", "Variables", config.OutboxParkQueueURL))] = true
	for _, fn := range resourcesOfType(tpl, "AWS::Serverless::Function") {
		for _, ev := range get(fn, "Properties", "Events").(doc) {
			if d := refTarget(get(ev, "Properties", "DestinationConfig", "OnFailure", "Destination")); d != "" {
				terminal[d] = true
			}
		}
	}
	for id, q := range queues {
		if terminal[id] {
			continue
		}
		rp := get(q, "Properties", "RedrivePolicy")
		dl := refTarget(get(rp, "deadLetterTargetArn"))
		if dl == "" || queues[dl] == nil {
			t.Errorf("%s has no dead-letter queue", id)
			continue
		}
		if num(get(rp, "maxReceiveCount")) < 5 {
			t.Errorf("%s: maxReceiveCount %v; want at least 5", id, get(rp, "maxReceiveCount"))
		}
		if get(q, "Properties", "FifoQueue") != get(queues[dl], "Properties", "FifoQueue") {
			t.Errorf("%s and its dead-letter queue %s are not of the same kind", id, dl)
		}
		if get(q, "Properties", "FifoQueue") == true && (get(q, "Properties", "DeduplicationScope") != "messageGroup" ||
			get(q, "Properties", "FifoThroughputLimit") != "perMessageGroupId") {
			t.Errorf("%s: want high-throughput FIFO settings", id)
		}
	}
	for id, q := range queues {
		if get(q, "Properties", "SqsManagedSseEnabled") != true {
			t.Errorf("%s: want SSE", id)
		}
	}
}

func TestTemplate_event_sources_report_batch_item_failures(t *testing.T) {
	tpl := loadTemplate(t)
	queues := resourcesOfType(tpl, "AWS::SQS::Queue")
	streams := 0
	for id, fn := range resourcesOfType(tpl, "AWS::Serverless::Function") {
		for name, ev := range get(fn, "Properties", "Events").(doc) {
			p := get(ev, "Properties")
			typ := get(ev, "Type")
			if typ != "SQS" && typ != "DynamoDB" {
				continue
			}
			if l, _ := get(p, "FunctionResponseTypes").([]any); !slices.Contains(l, any("ReportBatchItemFailures")) {
				t.Errorf("%s.%s: want FunctionResponseTypes [ReportBatchItemFailures]", id, name)
			}
			switch typ {
			case "SQS":
				q := refTarget(get(p, "Queue"))
				if num(get(p, "BatchSize")) != 10 || onDemandConcurrency(p) < 2 {
					t.Errorf("%s.%s: want batch size 10 and a maximum concurrency", id, name)
				}
				vis, timeout := num(get(queues[q], "Properties", "VisibilityTimeout")), functionTimeout(tpl, fn)
				if vis < 6*timeout {
					t.Errorf("%s: visibility timeout %d is under 6 x %s's timeout %d", q, vis, id, timeout)
				}
			case "DynamoDB":
				streams++
				// No stream consumer skips a record: retried until it succeeds, whatever its
				// age. The relay bisects a failing batch and has an on-failure destination; an
				// engine consumer (a CONSUMER_NAME) dead-letters a record itself, in order.
				if num(get(p, "MaximumRetryAttempts")) != -1 || num(get(p, "MaximumRecordAgeInSeconds")) != -1 {
					t.Errorf("%s.%s: want MaximumRetryAttempts and MaximumRecordAgeInSeconds -1", id, name)
				}
				env, _ := get(fn, "Properties", "Environment", "Variables").(doc)
				if env[config.ConsumerName] != nil {
					// An engine consumer of a stream: its letters, and the replay queue an
					// operator redrives them to, an SQS event of the same function that the
					// ReplayQueues output pairs with them.
					dl := refTarget(env[config.DeadLetterQueueURL])
					replays := fmt.Sprint(get(tpl, "Outputs", "ReplayQueues", "Value", "Fn::Sub"))
					paired := false
					for _, other := range get(fn, "Properties", "Events").(doc) {
						q := refTarget(get(other, "Properties", "Queue"))
						paired = paired || get(other, "Type") == "SQS" && dl != "" &&
							refTarget(get(queues[q], "Properties", "RedrivePolicy", "deadLetterTargetArn")) == dl &&
							strings.Contains(replays, "${"+dl+"}=${"+q+"}")
					}
					if !paired {
						t.Errorf("%s.%s: a stream consumer wants %s, and a replay queue it consumes that redrives there and that ReplayQueues names", id, name, config.DeadLetterQueueURL)
					}
				} else if get(p, "BisectBatchOnFunctionError") != true ||
					refTarget(get(p, "DestinationConfig", "OnFailure", "Destination")) == "" {
					t.Errorf("%s.%s: want bisect and an on-failure destination", id, name)
				}
			}
		}
	}
	if streams != 2 {
		t.Errorf("%d stream event sources; want the relay's and the statement consumer's", streams)
	}
}

// onDemandConcurrency is an SQS event's ScalingConfig.MaximumConcurrency: its own, or the one
// an !If gives it when provisioned mode is off (template_pollers_test.go checks the condition).
func onDemandConcurrency(event any) int {
	sc := get(event, "ScalingConfig")
	if l, ok := get(sc, "Fn::If").([]any); ok && len(l) == 3 {
		sc = l[2]
	}
	return num(get(sc, "MaximumConcurrency"))
}

// The inline policies of every deployed role (the template's own and those SAM adds) name
// their actions and resources; the managed policies SAM attaches are AWS's (template_roles_test.go).
func TestTemplate_policies_name_actions_and_resources(t *testing.T) {
	tpl := translated(t)
	var walk func(path string, v any)
	walk = func(path string, v any) {
		switch v := v.(type) {
		case doc:
			for k, c := range v {
				walk(path+"."+k, c)
			}
		case []any:
			for i, c := range v {
				walk(fmt.Sprintf("%s[%d]", path, i), c)
			}
		case string:
			if strings.Contains(path, ".Action") || strings.Contains(path, ".Resource") {
				if strings.Contains(v, "*") && !payloadObjects(tpl, v) {
					t.Errorf("%s = %q: no wildcard actions or resources", path, v)
				}
			}
		}
	}
	for id := range resourcesOfType(tpl, "AWS::Lambda::Function") {
		inline, _ := statements(t, tpl, id)
		if len(inline) == 0 {
			t.Errorf("%s has no policies of its own", id)
		}
		walk(roleOf(t, tpl, id)+".Policies", inline)
	}
}

// payloadObjects reports whether v is "${<bucket>.Arn}/<prefix>*" of a bucket of the template: S3 names
// a bucket's objects only with a wildcard (template_payloads_test.go checks who gets them).
func payloadObjects(tpl doc, v string) bool {
	id, ok := strings.CutPrefix(v, "${")
	id, rest, ok2 := strings.Cut(id, ".Arn}/")
	prefix, ok3 := strings.CutSuffix(rest, "*")
	// Every object, or those under a prefix of its own (a consumer's dead letters).
	return ok && ok2 && ok3 && !strings.Contains(prefix, "*") && get(tpl, "Resources", id, "Type") == "AWS::S3::Bucket"
}

// kebab turns "OutboxRelayFunction" into "outbox-relay".
func kebab(logicalID string) string {
	name := strings.TrimSuffix(logicalID, "Function")
	return strings.ToLower(regexp.MustCompile(`([a-z0-9])([A-Z])`).ReplaceAllString(name, "$1-$2"))
}

// loaders are internal/config's loaders by name; a function's main names the one it starts with
// (app.Start(name, config.LoadX, ...)), so that a new function needs no line here.
var loaders = map[string]func(func(string) string) error{
	"LoadAPI":      func(g func(string) string) error { _, err := config.LoadAPI(g); return err },
	"LoadRelay":    func(g func(string) string) error { _, err := config.LoadRelay(g); return err },
	"LoadConsumer": func(g func(string) string) error { _, err := config.LoadConsumer(g); return err },
	"LoadNotifier": func(g func(string) string) error { _, err := config.LoadNotifier(g); return err },
}

// mainLoader returns the name of the configuration loader that functions/<name>/main.go uses.
func mainLoader(t *testing.T, name string) string {
	t.Helper()
	src, err := os.ReadFile(filepath.Join("functions", name, "main.go"))
	if err != nil {
		t.Errorf("no functions/%s/main.go", name)
		return ""
	}
	m := regexp.MustCompile(`config\.(Load\w+)`).FindSubmatch(src)
	if m == nil {
		t.Errorf("functions/%s/main.go names no config.LoadX loader", name)
		return ""
	}
	return string(m[1])
}

func TestTemplate_every_function_has_a_build_target_sample_events_and_its_environment(t *testing.T) {
	tpl := loadTemplate(t)
	fns := resourcesOfType(tpl, "AWS::Serverless::Function")
	for _, id := range []string{"ApiFunction", "OutboxRelayFunction", "NoteTaggerFunction", "LedgerFunction", "NoteNotifierFunction"} {
		if fns[id] == nil {
			t.Errorf("function %s is missing from the template", id)
		}
	}
	for id, fn := range fns {
		t.Run(id, func(t *testing.T) {
			name := kebab(id)
			if get(fn, "Metadata", "BuildMethod") != "makefile" {
				t.Error("want Metadata.BuildMethod makefile")
			}
			// SAM runs `make build-<LogicalId>` (a pattern rule): it must build functions/<name>.
			dry, err := exec.Command("make", "-n", "build-"+id, "ARTIFACTS_DIR=/tmp/artifacts").CombinedOutput()
			if err != nil || !strings.Contains(string(dry), "-o /tmp/artifacts/bootstrap ./functions/"+name+"\n") {
				t.Errorf("make -n build-%s does not build ./functions/%s: %v\n%s", id, name, err, dry)
			}
			if samples, _ := filepath.Glob(filepath.Join("events", name+"-*.json")); len(samples) == 0 {
				t.Errorf("no sample event events/%s-*.json", name)
			}
			set, _ := get(fn, "Properties", "Environment", "Variables").(doc)
			loader := mainLoader(t, name)
			load, ok := loaders[loader]
			if !ok {
				t.Fatalf("functions/%s/main.go loads its configuration with %q, not a loader known here: add it to loaders", name, loader)
			}
			var read []string
			_ = load(func(k string) string { read = append(read, k); return "" })
			for _, k := range read {
				if _, ok := set[k]; !ok {
					t.Errorf("reads %s, which the template does not set", k)
				}
			}
		})
	}
}

func TestTemplate_api_routes_are_the_public_contract(t *testing.T) {
	tpl := loadTemplate(t)
	var got []string
	for _, ev := range get(tpl, "Resources", "ApiFunction", "Properties", "Events").(doc) {
		if get(ev, "Type") == "HttpApi" {
			got = append(got, fmt.Sprint(get(ev, "Properties", "Method"), " ", get(ev, "Properties", "Path")))
		}
	}
	slices.Sort(got)
	want := []string{"GET /accounts/{id}", "GET /accounts/{id}/movements/{reference}", "GET /notes/{id}", "GET /tags/{tag}",
		"POST /accounts/{id}/credits", "POST /accounts/{id}/debits", "POST /notes"}
	if !slices.Equal(got, want) {
		t.Errorf("routes = %v; want %v", got, want)
	}
}

func TestTemplate_alarms_watch_dead_letter_queues_and_message_age(t *testing.T) {
	tpl := loadTemplate(t)
	watched := map[string]bool{}
	for _, a := range resourcesOfType(tpl, "AWS::CloudWatch::Alarm") {
		for _, d := range get(a, "Properties", "Dimensions").([]any) {
			v := refTarget(get(d, "Value"))
			if v == "" { // a literal dimension value, as an EMF metric's
				v = fmt.Sprint(get(d, "Value"))
			}
			watched[fmt.Sprint(get(a, "Properties", "MetricName"), " ", v)] = true
		}
	}
	for _, w := range []string{
		"ApproximateNumberOfMessagesVisible NotesDeadLetterQueue", "ApproximateNumberOfMessagesVisible LedgerDeadLetterQueue",
		"ApproximateAgeOfOldestMessage NotesQueue", "ApproximateAgeOfOldestMessage LedgerQueue",
		"ApproximateNumberOfMessagesVisible NotificationsDeadLetterQueue", "ApproximateAgeOfOldestMessage NotificationsQueue",
		"ApproximateNumberOfMessagesVisible OutboxParkedQueue", "Parked outbox-relay",
	} {
		if !watched[w] {
			t.Errorf("no alarm on %s", w)
		}
	}
}

// The relay sends each event type to every queue its OUTBOX_ROUTES names (and, for a relay
// configured the first way, config.OutboxRoutes's variables): each must be a queue of the
// template the relay may send to, and the two must agree where both are set.
func TestTemplate_relay_routes_every_event_type_to_queues_it_may_send_to(t *testing.T) {
	tpl := translated(t)
	relay := get(tpl, "Resources", "OutboxRelayFunction")
	vars, _ := get(relay, "Properties", "Environment", "Variables").(doc)
	allowed := map[string]bool{}
	for _, s := range allStatements(t, tpl, "OutboxRelayFunction") {
		if slices.Contains(asList(get(s, "Action")), any("sqs:SendMessage")) {
			for _, r := range asList(get(s, "Resource")) {
				allowed[refTarget(r)] = true
			}
		}
	}
	queues := resourcesOfType(tpl, "AWS::SQS::Queue")
	routes := relayRoutes(t, tpl)
	for typ, names := range config.OutboxRoutes {
		for _, name := range names {
			q := refTarget(vars[name])
			if queues[q] == nil || !allowed[q] {
				t.Errorf("%s routes %s to %v (queue %q): want a queue of the template the relay may send to", name, typ, vars[name], q)
			}
			if !slices.Contains(routes[typ], q) {
				t.Errorf("%s routes %s to %s; %s does not: want the same routes", name, typ, q, config.OutboxRouteList)
			}
		}
	}
	for typ, qs := range routes {
		for _, q := range qs {
			if queues[q] == nil || !allowed[q] {
				t.Errorf("%s routes %s to queue %q: want a queue of the template the relay may send to", config.OutboxRouteList, typ, q)
			}
		}
	}
	if got := config.OutboxRoutes["note.created"]; !slices.Contains(got, config.NotificationsQueueURL) || !slices.Contains(got, config.NotesQueueURL) {
		t.Errorf("note.created routes to %v; want the notes and the notifications queues", got)
	}
	if got := routes["note.created"]; !slices.Contains(got, "NotesQueue") || !slices.Contains(got, "NotificationsQueue") {
		t.Errorf("%s routes note.created to %v; want the notes and the notifications queues", config.OutboxRouteList, got)
	}
}

// relayRoutes reads the relay's OUTBOX_ROUTES, !Sub "TYPE=${Queue},...": the logical ids of
// each type's queues.
func relayRoutes(t *testing.T, tpl doc) map[string][]string {
	t.Helper()
	sub, _ := get(tpl, "Resources", "OutboxRelayFunction", "Properties", "Environment", "Variables", config.OutboxRouteList, "Fn::Sub").(string)
	return subRoutes(t, config.OutboxRouteList, sub)
}

// subRoutes reads routes written TYPE=${Queue}, comma-separated, as config.ParseRoutes does.
func subRoutes(t *testing.T, what, sub string) map[string][]string {
	t.Helper()
	routes, err := config.ParseRoutes(sub)
	if err != nil || len(routes) == 0 {
		t.Fatalf("%s = %q: %v; want a !Sub of TYPE=${Queue} routes", what, sub, err)
	}
	for typ, qs := range routes {
		for i, q := range qs {
			m := regexp.MustCompile(`^\$\{(\w+)\}$`).FindStringSubmatch(q)
			if m == nil {
				t.Fatalf("%s: route %s=%s: want TYPE=${Queue}", what, typ, q)
			}
			qs[i] = m[1]
		}
	}
	return routes
}

// TestTemplate_records_outlive_every_redelivery_path checks that an idempotency record lives
// longer than the longest time a message can still come back: its source queue's retention,
// then (a FIFO dead-letter queue resets the enqueue time) the dead-letter queue's retention,
// then, redriven, the source queue's retention again.
func TestTemplate_records_outlive_every_redelivery_path(t *testing.T) {
	tpl := loadTemplate(t)
	queues := resourcesOfType(tpl, "AWS::SQS::Queue")
	longest := 0
	for id, q := range queues {
		dl := refTarget(get(q, "Properties", "RedrivePolicy", "deadLetterTargetArn"))
		if dl == "" {
			continue
		}
		src, dlq := num(get(q, "Properties", "MessageRetentionPeriod")), num(get(queues[dl], "Properties", "MessageRetentionPeriod"))
		if src == 0 || dlq == 0 {
			t.Errorf("%s or %s: set MessageRetentionPeriod explicitly", id, dl)
		}
		longest = max(longest, src+dlq+src)
	}
	p := get(tpl, "Parameters", "RetentionDays")
	for _, field := range []string{"MinValue", "Default"} {
		if days := num(get(p, field)); days*86400 <= longest {
			t.Errorf("RetentionDays %s is %d days; records must outlive %d s (%.1f days) of queue, dead-letter queue and redrive retention",
				field, days, longest, float64(longest)/86400)
		}
	}
}

// TestSamconfig_parameter_overrides_satisfy_the_template checks that `sam deploy` with
// samconfig.toml passes the template's parameter constraints.
func TestSamconfig_parameter_overrides_satisfy_the_template(t *testing.T) {
	tpl := loadTemplate(t)
	live, example := samconfigOverrides(t)
	// the commented first-deploy example shows where the issuer and the audience go
	if example["AuthIssuer"] == "" || example["AuthAudience"] == "" {
		t.Error("samconfig.toml shows no first-deploy parameter_overrides with AuthIssuer and AuthAudience")
	}
	for _, params := range append(slices.Collect(maps.Values(live)), example) {
		for name, value := range params {
			p, ok := get(tpl, "Parameters", name).(doc)
			if !ok {
				t.Errorf("samconfig.toml overrides %s, which the template does not declare", name)
				continue
			}
			if min, ok := p["MinValue"]; ok && num(value) < num(min) {
				t.Errorf("%s=%s is below the template's MinValue %v", name, value, min)
			}
			if allowed, ok := p["AllowedValues"].([]any); ok && !slices.Contains(allowed, any(value)) {
				t.Errorf("%s=%s is not one of %v", name, value, allowed)
			}
			if pat, ok := p["AllowedPattern"].(string); ok && !regexp.MustCompile("^(?:"+pat+")$").MatchString(value) {
				t.Errorf("%s=%s does not match %s", name, value, pat)
			}
		}
	}
}

// A message behind k failing group-mates of its batch is received about k x MaxAttempts times
// before it is tried, then fails at most MaxAttempts times of its own before the engine
// dead-letters it: the queue's maxReceiveCount must exceed BatchSize x DefaultMaxAttempts, so
// that SQS's redrive is only a backstop (for crashes and timeouts the engine cannot count)
// and never moves a message the engine would still try.
func TestTemplate_maxReceiveCount_is_only_a_backstop_behind_the_engines_count(t *testing.T) {
	tpl := loadTemplate(t)
	queues := resourcesOfType(tpl, "AWS::SQS::Queue")
	for id, fn := range resourcesOfType(tpl, "AWS::Serverless::Function") {
		for name, ev := range get(fn, "Properties", "Events").(doc) {
			if get(ev, "Type") != "SQS" {
				continue
			}
			q := refTarget(get(ev, "Properties", "Queue"))
			batch := num(get(ev, "Properties", "BatchSize"))
			want := batch * port.DefaultMaxAttempts
			if got := num(get(queues[q], "Properties", "RedrivePolicy", "maxReceiveCount")); got < want {
				t.Errorf("%s.%s: %s's maxReceiveCount is %d; want at least %d (BatchSize %d x port.DefaultMaxAttempts %d)",
					id, name, q, got, want, batch, port.DefaultMaxAttempts)
			}
		}
	}
}

// A consumer that holds groups writes the hold before a message's last receives only if it
// knows its queue's maxReceiveCount: every consumer function is told it (MAX_RECEIVE_COUNT),
// and the value is its queue's, so that a message the queue moves by itself is never one the
// consumer thought it had more receives for.
func TestTemplate_consumers_know_their_queues_maxReceiveCount(t *testing.T) {
	tpl := loadTemplate(t)
	queues := resourcesOfType(tpl, "AWS::SQS::Queue")
	checked := 0
	for id, fn := range resourcesOfType(tpl, "AWS::Serverless::Function") {
		vars := get(fn, "Properties", "Environment", "Variables")
		if name, _ := get(vars, config.ConsumerName).(string); name != "ledger" && name != "note-tagger" {
			continue // the consumers of config.LoadConsumer
		}
		for name, ev := range get(fn, "Properties", "Events").(doc) {
			if get(ev, "Type") != "SQS" {
				continue
			}
			q := refTarget(get(ev, "Properties", "Queue"))
			want := num(get(queues[q], "Properties", "RedrivePolicy", "maxReceiveCount"))
			if got := num(get(vars, config.MaxReceiveCount)); got != want {
				t.Errorf("%s.%s: %s is %v; want %d, %s's maxReceiveCount", id, name, config.MaxReceiveCount, get(vars, config.MaxReceiveCount), want, q)
			}
			checked++
		}
	}
	if checked < 2 {
		t.Errorf("checked %d consumer functions' queues; want the note-tagger's and the ledger's", checked)
	}
}
