package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/google/uuid"

	"github.com/onceflow/onceflow/infra/localcloud"
)

// sendCmd sends one message, as written, to a queue of the running cloud: the way to put a bad
// message (a poison: not JSON, a member twice, a reused event id) on a local queue and follow
// the runbook from its first step. On a FIFO queue it goes to -group with a fresh
// deduplication id, so that sending the same body twice sends it twice.
func sendCmd(args []string) error {
	fs := flag.NewFlagSet("send", flag.ContinueOnError)
	state := fs.String("state", ".local", "state directory")
	group := fs.String("group", "poison", "the message group (FIFO queues)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() != 2 {
		return fmt.Errorf("usage: make send Q=<queue> BODY='<message body>' [GROUP=<message group>] (BODY=- reads standard input)")
	}
	ep, err := localcloud.ReadEndpoints(*state)
	if err != nil {
		return err
	}
	q, ok := ep.Queues[fs.Arg(0)]
	if !ok {
		return fmt.Errorf("no queue %q; queues: %v", fs.Arg(0), sortedIDs(ep.Queues))
	}
	body := fs.Arg(1)
	if body == "-" {
		b, err := io.ReadAll(os.Stdin)
		if err != nil {
			return err
		}
		body = string(b)
	}
	in := &sqs.SendMessageInput{QueueUrl: aws.String(q.URL), MessageBody: aws.String(body)}
	if strings.HasSuffix(q.Name, ".fifo") {
		in.MessageGroupId, in.MessageDeduplicationId = group, aws.String(uuid.NewString())
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	out, err := ep.SQSClient().SendMessage(ctx, in)
	if err != nil {
		return fmt.Errorf("send to %s: %w", fs.Arg(0), err)
	}
	where := ""
	if in.MessageGroupId != nil {
		where = " in group " + *in.MessageGroupId
	}
	fmt.Printf("sent message %s to %s%s (%d bytes)\n", aws.ToString(out.MessageId), fs.Arg(0), where, len(body))
	return nil
}
