package onceflow_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/onceflow/onceflow/internal/config"
	"github.com/onceflow/onceflow/pkg/operator"
)

// consumerProblems lists, for every function of tpl with an SQS event source, what its part of
// the template lacks of what every consumer has (docs/consumer.md): a FIFO queue with a FIFO
// dead-letter queue it is told of, a route of the relay to its queue and the right to send there,
// alarms on its errors, throttles, conflicts, access denials, queue age and dead letters, its outcomes on the
// dashboard, a log group, the grants of its own records only, the outputs the operator
// tool reads and the operator's policy over its queues and keys. Nothing here names a consumer: a new one is checked as the first ones are.
func consumerProblems(t *testing.T, tpl doc) map[string][]string {
	t.Helper()
	out := map[string][]string{}
	resources := get(tpl, "Resources").(doc)
	alarmed := map[string]bool{} // "<metric> <dimension value or logical id>"
	for _, a := range resourcesOfType(tpl, "AWS::CloudWatch::Alarm") {
		for _, d := range asList(get(a, "Properties", "Dimensions")) {
			v := refTarget(get(d, "Value"))
			if v == "" {
				v = fmt.Sprint(get(d, "Value"))
			}
			alarmed[fmt.Sprint(get(a, "Properties", "MetricName"), " ", v)] = true
		}
	}
	logged := map[string]bool{}
	for _, g := range resourcesOfType(tpl, "AWS::Logs::LogGroup") {
		logged[fmt.Sprint(get(g, "Properties", "LogGroupName", "Fn::Sub"))] = true
	}
	var dashboard string
	for _, d := range resourcesOfType(tpl, "AWS::CloudWatch::Dashboard") {
		dashboard += fmt.Sprint(get(d, "Properties", "DashboardBody", "Fn::Sub"))
	}
	routes := relayRoutes(t, tpl)
	relaySends := sendsTo(get(resources, "OutboxRelayFunction"))
	outputs, _ := get(tpl, "Outputs").(doc)
	consumerNames := strings.Split(fmt.Sprint(get(outputs, "ConsumerNames", "Value")), ",")
	outputRoutes := fmt.Sprint(get(outputs, "OutboxRoutes", "Value", "Fn::Sub"))
	replayQueues := fmt.Sprint(get(outputs, "ReplayQueues", "Value", "Fn::Sub"))

	for id, fn := range resourcesOfType(tpl, "AWS::Serverless::Function") {
		for _, ev := range get(fn, "Properties", "Events").(doc) {
			if get(ev, "Type") != "SQS" {
				continue
			}
			problem := func(format string, args ...any) { out[id] = append(out[id], fmt.Sprintf(format, args...)) }
			env, _ := get(fn, "Properties", "Environment", "Variables").(doc)
			name, _ := env[config.ConsumerName].(string)
			if name == "" {
				problem("no %s", config.ConsumerName)
				continue
			}
			q := refTarget(get(ev, "Properties", "Queue"))
			dl := refTarget(get(resources, q, "Properties", "RedrivePolicy", "deadLetterTargetArn"))
			if get(resources, q, "Properties", "FifoQueue") != true || get(resources, dl, "Properties", "FifoQueue") != true {
				problem("queue %q and its dead-letter queue %q: want both FIFO", q, dl)
			}
			if refTarget(env[config.DeadLetterQueueURL]) != dl {
				problem("%s = %v; want !Ref %s, its queue's dead-letter queue", config.DeadLetterQueueURL, env[config.DeadLetterQueueURL], dl)
			}
			// A stream consumer's replay queue is fed by the operator's redrives (the
			// ReplayQueues output names it beside its dead-letter queue), not by the relay.
			replay := strings.Contains(replayQueues, "${"+dl+"}=${"+q+"}")
			routed := false
			for _, qs := range routes {
				routed = routed || slices.Contains(qs, q)
			}
			if !replay && (!routed || !relaySends[q]) {
				problem("the relay routes no event type to %s (%s) or may not send there", q, config.OutboxRouteList)
			}
			for _, w := range []string{"Errors " + id, "Throttles " + id, "Conflict " + name, "AccessDenied " + name,
				"ApproximateAgeOfOldestMessage " + q, "ApproximateNumberOfMessagesVisible " + dl} {
				if !alarmed[w] {
					problem("no alarm on %s", w)
				}
			}
			for _, m := range []string{"Applied", "Duplicate", "Rejected", "DeadLettered", "CommitLatency", "AccessDenied"} {
				if !strings.Contains(dashboard, fmt.Sprintf(`["onceflow", %q, "Consumer", %q`, m, name)) {
					problem("the dashboard does not show its %s", m)
				}
			}
			for _, w := range []string{"${" + dl + ".QueueName}", "${" + id + "}"} {
				if !strings.Contains(dashboard, w) {
					problem("the dashboard does not show %s", w)
				}
			}
			if !logged["/aws/lambda/${"+id+"}"] {
				problem("no log group /aws/lambda/${%s}", id)
			}
			sends := sendsTo(fn)
			if !sends[dl] || !receives(fn, q) {
				problem("its policy does not receive from %s and send to %s", q, dl)
			}
			var want []any
			for _, p := range operator.KeyPrefixes(name) {
				want = append(want, p+"*")
			}
			if got := get(tpl, "Mappings", "LeadingKeys", id, "Records"); fmt.Sprint(got) != fmt.Sprint(want) {
				problem("Mappings LeadingKeys %s Records = %v; want its own records only, %v", id, got, want)
			}
			op := operatorStatements(tpl)
			if !slices.Contains(op["ReadAndDeleteDeadLetters"].resources, dl) || !slices.Contains(op["SendBackToTheConsumerQueues"].resources, q) {
				problem("the OperatorPolicy does not read %s or send to %s", dl, q)
			}
			for _, p := range operator.AdminKeyPrefixes(name) {
				if !slices.Contains(op["ReadAndDecideTheConsumersItems"].keys, p+"*") {
					problem("the OperatorPolicy does not reach its keys %s*", p)
				}
			}
			for _, o := range []string{q + "Url", dl + "Url"} {
				if refTarget(get(outputs, o, "Value")) != map[string]string{q + "Url": q, dl + "Url": dl}[o] {
					problem("no output %s", o)
				}
			}
			if !slices.Contains(consumerNames, name) || !replay && !strings.Contains(outputRoutes, "=${"+q+"}") {
				problem("outputs ConsumerNames and OutboxRoutes (or ReplayQueues) do not name %s and %s", name, q)
			}
		}
	}
	return out
}

// sqsConsumers returns the logical ids of the functions of tpl with an SQS event source.
func sqsConsumers(tpl doc) []string {
	var out []string
	for id, fn := range resourcesOfType(tpl, "AWS::Serverless::Function") {
		for _, ev := range get(fn, "Properties", "Events").(doc) {
			if get(ev, "Type") == "SQS" {
				out = append(out, id)
			}
		}
	}
	return out
}

// sendsTo returns the resources fn's inline policy may sqs:SendMessage to.
func sendsTo(fn any) map[string]bool {
	out := map[string]bool{}
	for _, st := range inlineStatements(fn) {
		if slices.Contains(asList(get(st, "Action")), any("sqs:SendMessage")) {
			for _, r := range asList(get(st, "Resource")) {
				out[refTarget(r)] = true
			}
		}
	}
	return out
}

func receives(fn any, q string) bool {
	for _, st := range inlineStatements(fn) {
		if slices.Contains(asList(get(st, "Action")), any("sqs:ReceiveMessage")) && slices.ContainsFunc(asList(get(st, "Resource")),
			func(r any) bool { return refTarget(r) == q }) {
			return true
		}
	}
	return false
}

func inlineStatements(fn any) []any {
	var out []any
	for _, p := range asList(get(fn, "Properties", "Policies")) {
		out = append(out, asList(get(p, "Statement"))...)
	}
	return out
}

func TestTemplate_every_consumer_has_its_queues_route_alarms_dashboard_grants_and_outputs(t *testing.T) {
	tpl := loadTemplate(t)
	problems := consumerProblems(t, tpl)
	for id, ps := range problems {
		for _, p := range ps {
			t.Errorf("%s: %s", id, p)
		}
	}
	n := 0
	for _, fn := range resourcesOfType(tpl, "AWS::Serverless::Function") {
		if get(fn, "Properties", "Environment", "Variables", config.ConsumerName) != nil {
			n++
		}
	}
	if n < 3 {
		t.Fatalf("%d consumers; want at least the three of the example application", n)
	}
}

// The check above is shown to fail on a consumer's part lacking each thing it checks.
func TestTemplate_consumer_check_names_what_a_consumer_part_lacks(t *testing.T) {
	cases := []struct {
		name   string
		mutate func(tpl doc)
		want   string
	}{
		{"no age alarm", func(tpl doc) { delete(get(tpl, "Resources").(doc), "LedgerQueueAgeAlarm") }, "no alarm on ApproximateAgeOfOldestMessage LedgerQueue"},
		{"no conflict alarm", func(tpl doc) { delete(get(tpl, "Resources").(doc), "LedgerConflictAlarm") }, "no alarm on Conflict ledger"},
		{"no access-denied alarm", func(tpl doc) { delete(get(tpl, "Resources").(doc), "LedgerAccessDeniedAlarm") }, "no alarm on AccessDenied ledger"},
		{"no log group", func(tpl doc) { delete(get(tpl, "Resources").(doc), "LedgerFunctionLogGroup") }, "no log group"},
		{"no output", func(tpl doc) { delete(get(tpl, "Outputs").(doc), "LedgerDeadLetterQueueUrl") }, "no output LedgerDeadLetterQueueUrl"},
		{"no operator", func(tpl doc) { delete(get(tpl, "Resources").(doc), "OperatorPolicy") }, "the OperatorPolicy does not read LedgerDeadLetterQueue"},
		{"wide grant", func(tpl doc) { get(tpl, "Mappings", "LeadingKeys", "LedgerFunction").(doc)["Records"] = []any{"*"} }, "LeadingKeys LedgerFunction Records"},
		{"no route", func(tpl doc) {
			v := get(tpl, "Resources", "OutboxRelayFunction", "Properties", "Environment", "Variables", config.OutboxRouteList).(doc)
			v["Fn::Sub"] = strings.NewReplacer(",account.credited=${LedgerQueue}", "", ",account.debited=${LedgerQueue}", "").Replace(v["Fn::Sub"].(string))
		}, "the relay routes no event type to LedgerQueue"},
		{"no widget", func(tpl doc) {
			d := get(tpl, "Resources", "Dashboard", "Properties", "DashboardBody").(doc)
			d["Fn::Sub"] = strings.ReplaceAll(d["Fn::Sub"].(string), `"Applied", "Consumer", "ledger"`, `"Applied", "Consumer", "other"`)
		}, "the dashboard does not show its Applied"},
		{"no dead-letter queue", func(tpl doc) {
			delete(get(tpl, "Resources", "LedgerQueue", "Properties").(doc), "RedrivePolicy")
		}, "dead-letter queue \"\": want both FIFO"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tpl := loadTemplate(t)
			c.mutate(tpl)
			got := consumerProblems(t, tpl)["LedgerFunction"]
			if !slices.ContainsFunc(got, func(p string) bool { return strings.Contains(p, c.want) }) {
				t.Errorf("problems of LedgerFunction %q; want one saying %q", got, c.want)
			}
		})
	}
}
