package kinesisbatch_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
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
	body, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, k.url, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-amz-json-1.1")
	req.Header.Set("X-Amz-Target", "Kinesis_20131202."+op)
	cfg := testkit.Config()
	creds, err := cfg.Credentials.Retrieve(ctx)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(body)
	if err := v4.NewSigner().SignHTTP(ctx, creds, req, hex.EncodeToString(sum[:]), "kinesis", cfg.Region, time.Now()); err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("kinesis %s: %v", op, err)
	}
	defer resp.Body.Close()
	answer, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("kinesis %s: %s %s", op, resp.Status, answer)
	}
	if out != nil {
		if err := json.Unmarshal(answer, out); err != nil {
			t.Fatalf("kinesis %s: %v: %s", op, err, answer)
		}
	}
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
