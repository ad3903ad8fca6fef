package onceflow_test

import (
	"testing"

	"github.com/onceflow/onceflow/infra/localcloud"
	"github.com/onceflow/onceflow/infra/sam/samtest"
)

// Provisioned mode: with ConsumerMinimumPollers above 0 every consumer's SQS mapping deploys
// with ProvisionedPollerConfig and without ScalingConfig.MaximumConcurrency (Lambda refuses
// both on one mapping); at 0, the default, the reverse.
func TestTemplate_SQS_mappings_have_provisioned_pollers_or_a_maximum_concurrency_never_both(t *testing.T) {
	tpl := translated(t)
	cases := []struct {
		name             string
		params           map[string]string
		concurrency      int
		minimum, maximum int
	}{
		{"default: on demand", nil, 5, 0, 0},
		{"provisioned", map[string]string{"ConsumerMinimumPollers": "3", "ConsumerMaximumPollers": "40"}, 0, 3, 40},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tr := samtest.NewResolver(t, tpl, localcloud.Endpoints{}, c.params)
			n := 0
			for id, r := range resourcesOfType(tpl, "AWS::Lambda::EventSourceMapping") {
				if get(tpl, "Resources", refTarget(get(r, "Properties", "EventSourceArn")), "Type") != "AWS::SQS::Queue" {
					continue
				}
				n++
				p := asMap(tr.Resolve(doc{"ScalingConfig": get(r, "Properties", "ScalingConfig"),
					"ProvisionedPollerConfig": get(r, "Properties", "ProvisionedPollerConfig")}))
				_, scaling := p["ScalingConfig"]
				_, provisioned := p["ProvisionedPollerConfig"]
				got := []int{num(get(p, "ScalingConfig", "MaximumConcurrency")),
					num(get(p, "ProvisionedPollerConfig", "MinimumPollers")), num(get(p, "ProvisionedPollerConfig", "MaximumPollers"))}
				if scaling == provisioned || got[0] != c.concurrency || got[1] != c.minimum || got[2] != c.maximum {
					t.Errorf("%s: %v; want MaximumConcurrency %d or pollers %d-%d, one of the two", id, p, c.concurrency, c.minimum, c.maximum)
				}
			}
			if want := len(sqsConsumers(loadTemplate(t))); n != want || n < 3 {
				t.Errorf("%d SQS mappings; want the %d consumers' (at least the example application's three)", n, want)
			}
		})
	}
}
