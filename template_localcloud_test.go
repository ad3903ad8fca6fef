package onceflow_test

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/onceflow/onceflow/infra/localcloud"
	"github.com/onceflow/onceflow/infra/sam/samtest"
	"github.com/onceflow/onceflow/infra/workload/workloadtest"
)

// TestLocalCloud_creates_what_the_translated_template_deploys starts the local cloud of
// template.yaml and compares what it runs with what the SAM translator says a deploy creates
// (event source mappings side by side, functions, queues, tables, routes): where they differ,
// the local cloud is wrong. The AWS CLI then drives the same cloud (template_awscli_test.go),
// so that one start serves both.
func TestLocalCloud_creates_what_the_translated_template_deploys(t *testing.T) {
	tpl := translated(t)
	if os.Getenv("DYNAMODB_ENDPOINT") == "" || os.Getenv("SQS_ENDPOINT") == "" {
		t.Fatal("DYNAMODB_ENDPOINT and SQS_ENDPOINT are not set: run `make test`, or `infra/emulators.sh go test .`")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	// The template's own visibility timeouts, not the shorter ones other tests run with.
	cloud := workloadtest.Start(ctx, t, "template.yaml", "sam", func(cfg *localcloud.Config) { cfg.VisibilityTimeout = 0 })
	samtest.Compare(ctx, t, samtest.NewResolver(t, tpl, cloud.Endpoints(), nil), cloud.Cloud)
	t.Run("AWS CLI", func(t *testing.T) { driveWithAWSCLI(ctx, t, cloud) })
}
