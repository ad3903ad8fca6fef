package localcloud_test

import (
	"context"
	"testing"
	"time"

	"github.com/onceflow/onceflow/infra/sam/samtest"
)

// The shared local cloud of testdata/template.yaml (its SQS and stream sources with filters,
// a destination and retries, routes of two APIs with and without authorizers) against what
// the SAM translator makes of the same template: where they differ, the local cloud is wrong.
func TestCloud_creates_what_the_translated_template_deploys(t *testing.T) {
	tpl, _, err := samtest.Translate("testdata/template.yaml")
	if err != nil {
		t.Fatal(err)
	}
	c := cloud(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	samtest.Compare(ctx, t, samtest.NewResolver(t, tpl, c.Endpoints(), nil), c)
}
