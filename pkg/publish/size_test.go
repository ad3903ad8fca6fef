package publish_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/onceflow/onceflow/pkg/internal/testenv"
	"github.com/onceflow/onceflow/pkg/publish"
	"github.com/onceflow/onceflow/pkg/testkit"
)

// SQS takes up to 1 MiB per message and per SendMessageBatch call: four messages of 250 KB
// (each under the old 256 KiB limit, two of them over it together) go in one call.
func TestPublisher_batches_up_to_SQSs_1_MiB(t *testing.T) {
	t.Parallel()
	var reqs testenv.Requests
	client := testkit.SQS(t, sqs.WithAPIOptions(reqs.Middleware))
	url := testkit.CreateFIFOQueue(t, client, "publish-size")
	p, err := publish.New(client, publish.Config{})
	if err != nil {
		t.Fatal(err)
	}
	var msgs []publish.Message
	for i := range 4 {
		id := fmt.Sprintf("big-%d", i)
		msgs = append(msgs, publish.Message{DedupID: id, GroupID: id, Body: strings.Repeat(string(rune('a'+i)), 250_000)})
	}
	for i, err := range p.SendBatch(context.Background(), url, msgs) {
		if err != nil {
			t.Fatalf("message %d: %v", i, err)
		}
	}
	if n := reqs.Of("SendMessageBatch"); n != 1 {
		t.Errorf("SendMessageBatch calls = %d; want 1 (4 x 250 KB fit SQS's 1 MiB batch)", n)
	}
	got := testkit.Drain(t, client, url)
	if len(got) != 4 {
		t.Fatalf("received %d messages; want 4", len(got))
	}
	for _, m := range got {
		if n := len(aws.ToString(m.Body)); n != 250_000 {
			t.Errorf("message %s has %d bytes; want 250000", aws.ToString(m.MessageId), n)
		}
	}
}

// A message of exactly 1 MiB is sent as it is.
func TestPublisher_sends_a_message_of_1_MiB(t *testing.T) {
	t.Parallel()
	client := testkit.SQS(t)
	url := testkit.CreateFIFOQueue(t, client, "publish-size")
	p, err := publish.New(client, publish.Config{})
	if err != nil {
		t.Fatal(err)
	}
	body := strings.Repeat("m", publish.MaxMessageBytes)
	if err := p.Send(context.Background(), url, publish.Message{DedupID: "mib", GroupID: "g", Body: body}); err != nil {
		t.Fatal(err)
	}
	got := testkit.Drain(t, client, url)
	if len(got) != 1 || aws.ToString(got[0].Body) != body {
		t.Fatalf("received %d messages; want the 1 MiB one, unchanged", len(got))
	}
}
