package localcloud_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/onceflow/onceflow/infra/localcloud"
)

type echo struct {
	Request events.APIGatewayV2HTTPRequest
	Env     map[string]string
}

// call sends a request with a valid token of the local issuer (unless header has its own
// Authorization), as every route behind EchoApi's JWT authorizer needs.
func call(t *testing.T, method, url string, body []byte, header http.Header) (*http.Response, []byte) {
	t.Helper()
	return send(t, cloud(t).Endpoints().APIClient("tester", "echo.read"), method, url, body, header)
}

// send sends a request with client.
func send(t *testing.T, client *http.Client, method, url string, body []byte, header http.Header) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, url, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range header {
		req.Header[k] = v
	}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, b
}

func TestAPI_round_trips_http_api_events(t *testing.T) {
	ep := cloud(t).Endpoints()
	resp, body := call(t, "GET", ep.APIURL+"/echo/42?x=1", nil, http.Header{"X-Test-Header": {"a"}})
	if resp.StatusCode != 201 || resp.Header.Get("X-Echo") != "yes" {
		t.Fatalf("status %d, X-Echo %q: %s", resp.StatusCode, resp.Header.Get("X-Echo"), body)
	}
	var got echo
	if err := json.Unmarshal(body, &got); err != nil {
		t.Fatalf("%v: %s", err, body)
	}
	r := got.Request
	checks := map[string][2]string{
		"routeKey":         {r.RouteKey, "GET /echo/{id}"},
		"rawPath":          {r.RawPath, "/echo/42"},
		"path parameter":   {r.PathParameters["id"], "42"},
		"header":           {r.Headers["x-test-header"], "a"},
		"query":            {r.QueryStringParameters["x"], "1"},
		"method":           {r.RequestContext.HTTP.Method, "GET"},
		"STAGE":            {got.Env["STAGE"], "test"},
		"GREETING":         {got.Env["GREETING"], "hello-test-us-east-1"},
		"TABLE_NAME":       {got.Env["TABLE_NAME"], ep.Tables["NotesTable"].Name},
		"STREAM_ARN":       {got.Env["STREAM_ARN"], ep.Tables["NotesTable"].StreamARN},
		"CONSUMER":         {got.Env["CONSUMER"], "SQSConsumer"},
		"timeout":          {got.Env["AWS_LAMBDA_FUNCTION_TIMEOUT"], "3"},
		"memory (Globals)": {got.Env["AWS_LAMBDA_FUNCTION_MEMORY_SIZE"], "256"},
	}
	for name, c := range checks {
		if c[0] != c[1] {
			t.Errorf("%s = %q, want %q", name, c[0], c[1])
		}
	}
}

func TestAPI_base64_encodes_binary_bodies(t *testing.T) {
	ep := cloud(t).Endpoints()
	resp, body := call(t, "POST", ep.APIURL+"/echo", []byte{0xff, 0x00, 0xfe}, nil)
	var got echo
	if err := json.Unmarshal(body, &got); err != nil || resp.StatusCode != 201 {
		t.Fatalf("status %d %v: %s", resp.StatusCode, err, body)
	}
	if !got.Request.IsBase64Encoded || got.Request.Body != "/wD+" || got.Request.RouteKey != "POST /echo" {
		t.Errorf("body %q base64 %v route %q, want /wD+ true POST /echo", got.Request.Body, got.Request.IsBase64Encoded, got.Request.RouteKey)
	}
}

func TestAPI_unknown_route_is_404_json(t *testing.T) {
	ep := cloud(t).Endpoints()
	for _, c := range []struct{ method, path string }{{"GET", "/nope"}, {"DELETE", "/echo/1"}, {"GET", "/echo/1/2"}} {
		resp, body := call(t, c.method, ep.APIURL+c.path, nil, nil)
		if resp.StatusCode != 404 || !json.Valid(body) {
			t.Errorf("%s %s: %d %s, want 404 JSON", c.method, c.path, resp.StatusCode, body)
		}
	}
}

func TestAPI_panic_is_500_and_the_environment_is_restarted(t *testing.T) {
	ep := cloud(t).Endpoints()
	if resp, body := call(t, "GET", ep.APIURL+"/echo/panic", nil, nil); resp.StatusCode != 500 {
		t.Fatalf("panic: %d %s, want 500", resp.StatusCode, body)
	}
	if resp, body := call(t, "GET", ep.APIURL+"/echo/after", nil, nil); resp.StatusCode != 201 {
		t.Fatalf("after a panic: %d %s, want 201", resp.StatusCode, body)
	}
}

func TestLambdaAPI_invokes_by_logical_id(t *testing.T) {
	ep := cloud(t).Endpoints()
	api := localcloud.NewLambdaAPI(ep.LambdaURL)
	out, err := api.Invoke(context.Background(), "Echo", []byte(`{"rawPath":"/x","pathParameters":{"id":"x"}}`))
	if err != nil {
		t.Fatal(err)
	}
	var resp events.APIGatewayV2HTTPResponse
	if err := json.Unmarshal(out, &resp); err != nil || resp.StatusCode != 201 {
		t.Fatalf("%v: %s", err, out)
	}
	_, err = api.Invoke(context.Background(), "Echo", []byte(`{"pathParameters":{"id":"panic"}}`))
	if !localcloud.IsFunctionError(err) {
		t.Errorf("panic: err = %v, want a FunctionError", err)
	}
	if _, err := api.Invoke(context.Background(), "NoSuchFunction", []byte(`{}`)); err == nil || localcloud.IsFunctionError(err) {
		t.Errorf("unknown function: err = %v, want a call error", err)
	}
}

func TestAPI_timeout_is_500_and_the_environment_serves_again(t *testing.T) {
	ep := cloud(t).Endpoints()
	start := time.Now()
	if resp, body := call(t, "GET", ep.APIURL+"/echo/sleep", nil, nil); resp.StatusCode != 500 {
		t.Fatalf("timeout: %d %s, want 500", resp.StatusCode, body)
	}
	// The function's timeout is 3 s; the bound is loose for a loaded machine and still far
	// below what a client would wait for a function the cloud never timed out.
	if d := time.Since(start); d > 20*time.Second {
		t.Errorf("answered after %s, want about the function timeout (3 s)", d)
	}
	if resp, body := call(t, "GET", ep.APIURL+"/echo/after", nil, nil); resp.StatusCode != 201 {
		t.Fatalf("after a timeout: %d %s, want 201", resp.StatusCode, body)
	}
}
