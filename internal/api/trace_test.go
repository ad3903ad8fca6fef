package api_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/aws/aws-lambda-go/events"
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
	// Without the invocation's trace (the Runtime Interface Emulator drops it), the one API
	// Gateway passed in the request's headers.
	inEvent := func(req events.APIGatewayV2HTTPRequest) events.APIGatewayV2HTTPRequest {
		headers := map[string]string{"x-amzn-trace-id": header}
		for k, v := range req.Headers {
			headers[k] = v
		}
		req.Headers = headers
		return req
	}
	cases := []struct {
		name, sample string
		ctx          context.Context
		req          func(events.APIGatewayV2HTTPRequest) events.APIGatewayV2HTTPRequest
	}{
		{"note, the invocation's trace", "api-create-note.json", ctx, nil},
		{"credit, the invocation's trace", "api-credit.json", ctx, nil},
		{"note, the trace header of the event", "api-create-note.json", context.Background(), inEvent},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := newFixture(t)
			req := sample(t, c.sample)
			if c.req != nil {
				req = c.req(req)
			}
			resp, err := f.h.Handle(c.ctx, req)
			if err != nil || resp.StatusCode >= http.StatusBadRequest {
				t.Fatalf("%s = %d %s, %v", c.sample, resp.StatusCode, resp.Body, err)
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
