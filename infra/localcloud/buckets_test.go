package localcloud_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
)

// The template's bucket exists on fauxqs's S3, a function's !Ref to it is its name, and the
// function's S3 endpoint is the one that serves it.
func TestStart_creates_the_templates_buckets_on_fauxqs_S3(t *testing.T) {
	ep := cloud(t).Endpoints()
	b := ep.Buckets["Payloads"]
	if b.Name == "" || b.Name != strings.ToLower(b.Name) || b.ARN != "arn:aws:s3:::"+b.Name {
		t.Fatalf("endpoints bucket %+v; want a lower-case name and its ARN", b)
	}
	client, ctx := ep.S3Client(), context.Background()
	if _, err := client.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String(b.Name), Key: aws.String("k"), Body: strings.NewReader("payload")}); err != nil {
		t.Fatal(err)
	}
	out, err := client.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(b.Name), Key: aws.String("k")})
	if err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(out.Body)
	out.Body.Close()
	if string(got) != "payload" {
		t.Fatalf("read back %q; want payload", got)
	}
	resp, body := call(t, "GET", ep.APIURL+"/echo/bucket", nil, nil)
	var echoed struct{ Env map[string]string }
	if err := json.Unmarshal(body, &echoed); err != nil || resp.StatusCode != http.StatusCreated {
		t.Fatalf("echo: %d %v: %s", resp.StatusCode, err, body)
	}
	// The function reaches S3 through the gatekeeper, which passes what its role allows to
	// fauxqs's S3 at the SQS endpoint.
	if echoed.Env["PAYLOADS"] != b.Name || echoed.Env["AWS_ENDPOINT_URL_S3"] != ep.Gatekeeper || ep.Gatekeeper == "" {
		t.Fatalf("function sees PAYLOADS %q, AWS_ENDPOINT_URL_S3 %q; want %q and the gatekeeper %q",
			echoed.Env["PAYLOADS"], echoed.Env["AWS_ENDPOINT_URL_S3"], b.Name, ep.Gatekeeper)
	}
}
