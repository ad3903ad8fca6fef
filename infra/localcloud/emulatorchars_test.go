package localcloud_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/smithy-go"

	"github.com/onceflow/onceflow/pkg/testkit"
)

// TestFauxqs_refuses_the_characters_SQS_refuses_and_every_one_beyond_U_FFFF pins what the
// local SQS emulator accepts in a message body, against what SQS documents (#x9 | #xA | #xD |
// #x20 to #xD7FF | #xE000 to #xFFFD | #x10000 to #x10FFFF): fauxqs also refuses U+10000 to
// U+10FFFF (emoji and every other astral-plane character), which SQS accepts. The outbox
// escapes those in its bodies, so the local cloud carries them.
func TestFauxqs_refuses_the_characters_SQS_refuses_and_every_one_beyond_U_FFFF(t *testing.T) {
	t.Parallel()
	client := testkit.SQS(t)
	q := testkit.CreateFIFOQueue(t, client, "chars")
	cases := []struct {
		r             rune
		sqs, emulator bool // accepted by SQS (documented), by fauxqs (measured)
	}{
		{'\t', true, true}, {' ', true, true}, {0x7f, true, true}, {0xe9, true, true}, {0xD7FF, true, true},
		{0xE000, true, true}, {0xFEFF, true, true}, {0xFFFD, true, true},
		{0x1, false, false}, {0x1f, false, false}, {0xFFFE, false, false}, {0xFFFF, false, false},
		{0x10000, true, false}, {0x1F389, true, false}, {0x1F600, true, false}, {0x10FFFF, true, false},
	}
	for i, c := range cases {
		t.Run(fmt.Sprintf("%U", c.r), func(t *testing.T) {
			_, err := client.SendMessage(context.Background(), &sqs.SendMessageInput{QueueUrl: aws.String(q),
				MessageBody: aws.String("x" + string(c.r) + "y"), MessageGroupId: aws.String("g"), MessageDeduplicationId: aws.String(fmt.Sprint(i))})
			var api smithy.APIError
			refused := errors.As(err, &api) && api.ErrorCode() == "AWS.SimpleQueueService.InvalidMessageContents"
			if err != nil && !refused {
				t.Fatal(err)
			}
			if !refused != c.emulator {
				t.Fatalf("fauxqs accepted %U: %v (err %v); want %v (SQS: %v)", c.r, !refused, err, c.emulator, c.sqs)
			}
		})
	}
}
