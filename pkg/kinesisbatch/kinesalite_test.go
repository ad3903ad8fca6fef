package kinesisbatch_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"testing"
	"time"

	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"

	"github.com/onceflow/onceflow/pkg/testkit"
)

// kinesalite calls the Kinesis API of kinesalite as the SDK does (JSON 1.1, signed with SigV4),
// for the few operations these tests make: the port itself links only Lambda's event types, so
// the engine's module does without the SDK's Kinesis client.
type kinesalite struct{ url string }

// call sends Kinesis_20131202.<op> with in and decodes the answer into out.
func (k kinesalite) call(t *testing.T, op string, in, out any) {
	t.Helper()
	if err := k.try(op, in, out); err != nil {
		t.Fatal(err)
	}
}

// try is call, its failure returned.
func (k kinesalite) try(op string, in, out any) error {
	body, err := json.Marshal(in)
	if err != nil {
		return err
	}
	ctx := context.Background()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, k.url, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/x-amz-json-1.1")
	req.Header.Set("X-Amz-Target", "Kinesis_20131202."+op)
	cfg := testkit.Config()
	creds, err := cfg.Credentials.Retrieve(ctx)
	if err != nil {
		return err
	}
	sum := sha256.Sum256(body)
	if err := v4.NewSigner().SignHTTP(ctx, creds, req, hex.EncodeToString(sum[:]), "kinesis", cfg.Region, time.Now()); err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("kinesis %s: %w", op, err)
	}
	defer resp.Body.Close()
	answer, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("kinesis %s: %s %s", op, resp.Status, answer)
	}
	if out != nil {
		if err := json.Unmarshal(answer, out); err != nil {
			return fmt.Errorf("kinesis %s: %w: %s", op, err, answer)
		}
	}
	return nil
}

// description is what DescribeStream answers, as far as these tests read it.
type description struct {
	StreamDescription struct {
		StreamARN    string
		StreamStatus string
		Shards       []struct{ ShardId string }
	}
}

// record is a record GetRecords answers.
type record struct {
	SequenceNumber              string
	PartitionKey                string
	Data                        []byte  // base64 in JSON
	ApproximateArrivalTimestamp float64 // seconds since the epoch
}

// describe returns the stream's description.
func (k kinesalite) describe(t *testing.T, name string) description {
	t.Helper()
	var d description
	k.call(t, "DescribeStream", map[string]string{"StreamName": name}, &d)
	return d
}

// arrival is a record's arrival time.
func (r record) arrival() time.Time {
	return time.UnixMilli(int64(r.ApproximateArrivalTimestamp * 1000))
}

// kinesalite throws, and exits, when a client goes away in the middle of a request's body
// (its request 'error' handler rethrows ECONNRESET "aborted"): one test's cancelled call took
// it down for every later test of a make test run. Kinesis answers the next client whatever
// the last one did; the emulator, started with the test kit's preload, does too.
func TestKinesalite_serves_on_after_a_client_aborts_a_request(t *testing.T) {
	k := kinesalite{url: testkit.Emulator(t, testkit.KinesisEndpointVariable)}
	u, err := url.Parse(k.url)
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
		conn, err := net.Dial("tcp", u.Host)
		if err != nil {
			t.Fatal(err)
		}
		// A body announced as 100 bytes, cut after 10.
		fmt.Fprintf(conn, "POST / HTTP/1.1\r\nHost: %s\r\nContent-Type: application/x-amz-json-1.1\r\nX-Amz-Target: Kinesis_20131202.ListStreams\r\nContent-Length: 100\r\n\r\n{\"Limit\":1", u.Host)
		time.Sleep(50 * time.Millisecond) // the server has the partial body before the client goes
		conn.Close()
	}
	var answer struct{ StreamNames []string }
	deadline := time.Now().Add(5 * time.Second)
	for {
		err := k.try("ListStreams", map[string]any{}, &answer)
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("kinesalite after 3 aborted requests: %v", err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
