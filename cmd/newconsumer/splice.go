package main

import (
	"bytes"
	"fmt"
	"regexp"
	"strings"

	"github.com/onceflow/onceflow/pkg/operator"
)

// The places of template.yaml a consumer's part goes. CloudFormation has no loop that the
// local cloud, the SAM translator and cfn-lint all read, so the part is written out, each piece
// where it belongs; the template tests then check every consumer's part as the first ones'.
const (
	markLeadingKeys = "    # make consumer: a consumer's LeadingKeys above this line\n"
	markRelayQueues = "                # make consumer: a consumer's queue above this line\n"
	// The operator's policy: the consumer's dead-letter queue, its queue and its keys.
	markOperatorDLQs  = "              # make consumer: a consumer's dead-letter queue for the operator above this line\n"
	markOperatorQueue = "              # make consumer: a consumer's queue for the operator above this line\n"
	markOperatorKeys  = "                  # make consumer: a consumer's keys for the operator above this line\n"
	dashboardEnd      = "\n          ]}\n"
	outputsStart      = "\nOutputs:\n"
)

var (
	relayRoutes  = regexp.MustCompile(`(?m)^(\s+OUTBOX_ROUTES: !Sub ")([^"]*)(")`)
	outputRoutes = regexp.MustCompile(`(?m)^(  OutboxRoutes:\n(?:    .*\n)*?    Value: !Sub ")([^"]*)(")`)
	consumerList = regexp.MustCompile(`(?m)^(  ConsumerNames:\n(?:    .*\n)*?    Value: )(.*)$`)
)

// insertion is text of the consumer's part that goes right above a marker line of the template.
type insertion struct{ what, mark, text string }

// insertions are the consumer's lines that go above the template's markers: its LeadingKeys,
// its queue in the relay's grant, and its dead-letter queue, queue and keys in the operator's.
func (c *consumer) insertions() []insertion {
	var records []string
	for _, p := range operator.KeyPrefixes(c.Name) {
		records = append(records, fmt.Sprintf("%q", p+"*"))
	}
	var keys string
	for _, p := range operator.AdminKeyPrefixes(c.Name) {
		keys += fmt.Sprintf("                  - %q\n", p+"*")
	}
	return []insertion{
		{"its LeadingKeys", markLeadingKeys, fmt.Sprintf("    %sFunction:\n      Writes: [\"%s#*\"]\n      Records: [%s]\n",
			c.ID, c.Prefix, strings.Join(records, ", "))},
		{"its queue in the relay's sqs:SendMessage list", markRelayQueues, "                - !GetAtt " + c.ID + "Queue.Arn\n"},
		{"its dead-letter queue in the operator's policy", markOperatorDLQs, "              - !GetAtt " + c.ID + "DeadLetterQueue.Arn\n"},
		{"its queue in the operator's policy", markOperatorQueue, "              - !GetAtt " + c.ID + "Queue.Arn\n"},
		{"its keys in the operator's policy", markOperatorKeys, keys},
	}
}

// splice returns tpl with the consumer's part in it.
func (c *consumer) splice(tpl []byte) ([]byte, error) {
	s := string(tpl)
	if strings.Contains(s, "\n  "+c.ID+"Function:\n") {
		return nil, fmt.Errorf("%sFunction exists: choose another name", c.ID)
	}
	for _, anchor := range []string{dashboardEnd, outputsStart} {
		if n := strings.Count(s, anchor); n != 1 {
			return nil, fmt.Errorf("%d places %q; want one", n, strings.TrimSpace(anchor))
		}
	}
	for _, in := range c.insertions() {
		if n := strings.Count(s, in.mark); n != 1 {
			return nil, fmt.Errorf("%d places %q; want one", n, strings.TrimSpace(in.mark))
		}
		s = strings.Replace(s, in.mark, in.text+in.mark, 1)
	}
	var routes string
	for _, t := range c.Types {
		routes += "," + t + "=${" + c.ID + "Queue}"
	}
	for _, re := range []*regexp.Regexp{relayRoutes, outputRoutes} {
		if n := len(re.FindAllStringIndex(s, -1)); n != 1 {
			return nil, fmt.Errorf("%d places %s; want one", n, re)
		}
		s = re.ReplaceAllString(s, "${1}${2}"+strings.ReplaceAll(routes, "$", "$$")+"${3}")
	}
	if n := len(consumerList.FindAllStringIndex(s, -1)); n != 1 {
		return nil, fmt.Errorf("%d places %s; want one", n, consumerList)
	}
	s = consumerList.ReplaceAllString(s, "${1}${2},"+c.Name)
	widgets, err := c.execute("widgets.json.tmpl")
	if err != nil {
		return nil, err
	}
	s = strings.Replace(s, dashboardEnd, ",\n"+string(bytes.TrimRight(widgets, "\n"))+dashboardEnd, 1)
	resources, err := c.execute("resources.yaml.tmpl")
	if err != nil {
		return nil, err
	}
	s = strings.Replace(s, outputsStart, "\n"+strings.TrimRight(string(resources), "\n")+"\n"+outputsStart, 1)
	s = strings.TrimRight(s, "\n") + fmt.Sprintf("\n  %[1]sQueueUrl:\n    Value: !Ref %[1]sQueue\n  %[1]sDeadLetterQueueUrl:\n    Value: !Ref %[1]sDeadLetterQueue\n", c.ID)
	return []byte(s), nil
}
