package onceflow_test

import (
	"testing"

	"github.com/onceflow/onceflow/infra/localcloud"
	"github.com/onceflow/onceflow/infra/sam/samtest"
	"github.com/onceflow/onceflow/infra/workload/workloadtest"
	"github.com/onceflow/onceflow/internal/testenv"

	"github.com/onceflow/onceflow/pkg/testkit"
)

// TestLocalCloud_creates_what_the_translated_template_deploys starts the local cloud of
// template.yaml and compares what it runs with what the SAM translator says a deploy creates
// (event source mappings side by side, functions, queues, tables, routes): where they differ,
// the local cloud is wrong. The AWS CLI then drives the same cloud (template_awscli_test.go),
// so that one start serves both.
func TestLocalCloud_creates_what_the_translated_template_deploys(t *testing.T) {
	tpl := translated(t)
	testkit.Emulator(t, testkit.EndpointVariable)
	testkit.Emulator(t, testkit.SQSEndpointVariable)
	// No bound on the whole: it does many steps (a cloud's start, each a call of the AWS CLI,
	// a Python program that takes seconds of CPU to start) whose time grows with the machine's
	// load, and 4 minutes ran out in the AWS CLI's first steps at a load of 20 on 2 cores. Each
	// step has a bound of its own, on a hang; go test's -timeout bounds the test.
	ctx := testenv.BeforeTimeout(t)
	// The template's own visibility timeouts, not the shorter ones other tests run with.
	cloud := workloadtest.Start(ctx, t, "template.yaml", "sam", func(cfg *localcloud.Config) { cfg.VisibilityTimeout = 0 })
	samtest.Compare(ctx, t, samtest.NewResolver(t, tpl, cloud.Endpoints(), nil), cloud.Cloud)
	t.Run("AWS CLI", func(t *testing.T) { driveWithAWSCLI(ctx, t, cloud) })
}
