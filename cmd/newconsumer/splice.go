package main

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/onceflow/onceflow/infra/consumerunit"
)

// The places of template.yaml a consumer's part goes beyond its unit (infra/consumerunit
// splices the unit): its queue in the relay's grant, and its routes.
const markRelayQueues = "                # make consumer: a consumer's queue above this line\n"

var (
	relayRoutes  = regexp.MustCompile(`(?m)^(\s+OUTBOX_ROUTES: !Sub ")([^"]*)(")`)
	outputRoutes = regexp.MustCompile(`(?m)^(  OutboxRoutes:\n(?:    .*\n)*?    Value: !Sub ")([^"]*)(")`)
)

// relayQueue is the consumer's line above the relay's marker: its queue in the relay's grant.
func (c *consumer) relayQueue() string {
	return "                - !GetAtt " + c.unit().QueueID + "Queue.Arn\n"
}

// splice returns tpl with the consumer's part in it: its unit, its queue in the relay's grant
// and its routes in the relay's OUTBOX_ROUTES and the OutboxRoutes output.
func (c *consumer) splice(tpl []byte) ([]byte, error) {
	out, err := consumerunit.Splice(tpl, c.unit())
	if err != nil {
		return nil, err
	}
	s := string(out)
	if n := strings.Count(s, markRelayQueues); n != 1 {
		return nil, fmt.Errorf("%d places %q; want one", n, strings.TrimSpace(markRelayQueues))
	}
	s = strings.Replace(s, markRelayQueues, c.relayQueue()+markRelayQueues, 1)
	var routes string
	for _, t := range c.Types {
		routes += "," + t + "=${" + c.unit().QueueID + "Queue}"
	}
	for _, re := range []*regexp.Regexp{relayRoutes, outputRoutes} {
		if n := len(re.FindAllStringIndex(s, -1)); n != 1 {
			return nil, fmt.Errorf("%d places %s; want one", n, re)
		}
		s = re.ReplaceAllString(s, "${1}${2}"+strings.ReplaceAll(routes, "$", "$$")+"${3}")
	}
	return []byte(s), nil
}
