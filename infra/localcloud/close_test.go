package localcloud_test

import (
	"fmt"
	"net"
	"net/url"
	"os"
	"testing"
	"time"

	"github.com/onceflow/onceflow/infra/localcloud"
	"github.com/onceflow/onceflow/pkg/testkit"
)

// A client still in the middle of a request when the cloud closes (an SQS long poll through a
// proxy, a slow client on a loaded machine) does not make Close fail: stopping the cloud cuts
// what is still open once the servers' grace has passed. A make test on a loaded machine failed
// with "close the local cloud: context deadline exceeded" after its test had passed.
func TestCloud_Close_cuts_a_request_still_open(t *testing.T) {
	testkit.SkipShort(t)
	t.Parallel()
	cloud, err := localcloud.Start(t.Context(), localcloud.Config{
		Template: "testdata/one/template.yaml", StateDir: t.TempDir(), Prefix: fmt.Sprintf("cl%d", time.Now().UnixNano()),
		DynamoDBEndpoint: os.Getenv("DYNAMODB_ENDPOINT"), SQSEndpoint: os.Getenv("SQS_ENDPOINT"), Ungated: true,
		Install: true,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cloud.Close() })
	u, err := url.Parse(cloud.Endpoints().LambdaURL)
	if err != nil {
		t.Fatal(err)
	}
	conn, err := net.Dial("tcp", u.Host)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	// A request whose headers never end: whether the server has read its first bytes yet
	// (active) or not (new, for less than 5 s), Shutdown waits for it.
	if _, err := fmt.Fprintf(conn, "POST /2015-03-31/functions/Echo/invocations HTTP/1.1\r\nHost: %s\r\n", u.Host); err != nil {
		t.Fatal(err)
	}
	if err := cloud.Close(); err != nil {
		t.Fatalf("Close with a request still open: %v", err)
	}
}
