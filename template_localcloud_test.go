package onceflow_test

import (
	"context"
	"testing"
	"time"

	"github.com/onceflow/onceflow/infra/localcloud"
	"github.com/onceflow/onceflow/infra/sam/samtest"
	"github.com/onceflow/onceflow/infra/workload/workloadtest"

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
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	// The template's own visibility timeouts, not the shorter ones other tests run with.
	cloud := workloadtest.Start(ctx, t, "template.yaml", "sam", func(cfg *localcloud.Config) { cfg.VisibilityTimeout = 0 })
	samtest.Compare(ctx, t, samtest.NewResolver(t, tpl, cloud.Endpoints(), nil), cloud.Cloud)
	t.Run("AWS CLI", func(t *testing.T) { driveWithAWSCLI(ctx, t, cloud) })
}
