package xray_test

import (
	"context"
	"fmt"

	"github.com/onceflow/onceflow/pkg/xray"
)

// A trace header goes through a context from where it enters (the Lambda invocation, an SQS
// message's AWSTraceHeader) to where it is logged: its Root is the trace id X-Ray shows.
func Example() {
	header := "Root=1-5759e988-bd862e3fe1be46a994272793;Parent=53995c3f42cd8ad8;Sampled=1"
	ctx := xray.NewContext(context.Background(), header)

	fmt.Println(xray.FromContext(ctx) == header)
	fmt.Println(xray.TraceID(xray.FromContext(ctx)))
	// Output:
	// true
	// 1-5759e988-bd862e3fe1be46a994272793
}
