package api_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/onceflow/onceflow/pkg/outbox"
)

func TestAPI_an_event_is_stored_with_the_trace_of_the_request_that_wrote_it(t *testing.T) {
	const header = "Root=1-5759e988-bd862e3fe1be46a994272793;Parent=53995c3f42cd8ad8;Sampled=1"
	// aws-lambda-go puts an invocation's trace header in its context under this string key.
	//nolint:staticcheck // the key is aws-lambda-go's
	ctx := context.WithValue(context.Background(), "x-amzn-trace-id", header)
	for _, name := range []string{"api-create-note.json", "api-credit.json"} {
		t.Run(name, func(t *testing.T) {
			f := newFixture(t)
			resp, err := f.h.Handle(ctx, sample(t, name))
			if err != nil || resp.StatusCode >= http.StatusBadRequest {
				t.Fatalf("%s = %d %s, %v", name, resp.StatusCode, resp.Body, err)
			}
			out, err := f.db.Scan(context.Background(), &dynamodb.ScanInput{TableName: aws.String(f.table), ConsistentRead: aws.Bool(true)})
			if err != nil {
				t.Fatal(err)
			}
			var traces []string
			for _, item := range out.Items {
				var it outbox.Item
				if err := attributevalue.UnmarshalMap(item, &it); err == nil && it.Kind == outbox.Kind {
					traces = append(traces, it.TraceHeader)
				}
			}
			if len(traces) != 1 || traces[0] != header {
				t.Fatalf("outbox items' trace headers = %q; want the request's %q", traces, header)
			}
		})
	}
}
