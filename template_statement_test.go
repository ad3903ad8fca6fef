package onceflow_test

import (
	"context"
	"encoding/json"
	"slices"
	"testing"

	"github.com/aws/aws-lambda-go/events"

	"github.com/onceflow/onceflow/internal/statement"
	"github.com/onceflow/onceflow/pkg/dynamodbbatch"
)

// The statement consumer's event source mapping filters its stream to the change types its
// Router routes: no fewer (a change dropped without a trace), no more (an invocation only to
// be ignored). Each eventName the filter keeps is read through the port's own decoder.
func TestStatement_filter_keeps_the_change_types_its_router_routes(t *testing.T) {
	tpl := loadTemplate(t)
	filters, _ := get(tpl, "Resources", "StatementFunction", "Properties", "Events", "AccountChanges", "Properties",
		"FilterCriteria", "Filters").([]any)
	if len(filters) != 1 {
		t.Fatalf("AccountChanges has %d filters; want 1", len(filters))
	}
	var pattern struct{ EventName []string }
	if err := json.Unmarshal([]byte(get(filters[0], "Pattern").(string)), &pattern); err != nil {
		t.Fatalf("AccountChanges' filter pattern: %v", err)
	}
	var kept []string
	for _, name := range pattern.EventName {
		ev, err := dynamodbbatch.ChangeEvent(context.Background(), events.DynamoDBEventRecord{EventID: "e1", EventName: name})
		if err != nil {
			t.Fatal(err)
		}
		kept = append(kept, ev.Type)
	}
	slices.Sort(kept)
	if routed := statement.Handler("app").Types(); !slices.Equal(kept, routed) {
		t.Errorf("the filter keeps %v (eventName %v); the router routes %v", kept, pattern.EventName, routed)
	}
}
