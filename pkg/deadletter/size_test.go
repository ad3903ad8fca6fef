package deadletter_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/onceflow/onceflow/pkg/deadletter"
)

// A body past 256 KiB can only have come from a queue of SQS's 1 MiB limit: its reason is cut
// to what fits 1 MiB, not to MinReasonBytes.
func TestQueue_keeps_the_whole_reason_beside_a_body_past_256_KiB(t *testing.T) {
	t.Parallel()
	c := client(t)
	url := createQueue(t, c, true, nil) // SQS's (and the emulator's) default: 1 MiB
	msg := source("msg-600k")
	msg.Body = strings.Repeat("x", 600_000)
	reason := "handler: " + strings.Repeat("detail ", 400) // 2,809 bytes
	if err := deadletter.New(c, url).DeadLetter(t.Context(), msg, errors.New(reason)); err != nil {
		t.Fatalf("DeadLetter: %v", err)
	}
	got := receiveAll(t, c, url)
	if len(got) != 1 {
		t.Fatalf("received %d messages; want 1", len(got))
	}
	if r := attr(got[0], deadletter.AttrReason); r != reason {
		t.Errorf("reason is %d bytes; want all %d of it", len(r), len(reason))
	}
}

// Beside a body just under 1 MiB the reason is cut to MinReasonBytes, and the send fails
// rather than drops anything when even that does not fit.
func TestQueue_cuts_the_reason_beside_a_body_near_1_MiB(t *testing.T) {
	t.Parallel()
	c := client(t)
	url := createQueue(t, c, true, nil)
	msg := source("msg-1mib")
	msg.Body = strings.Repeat("x", 1<<20-5000)
	if err := deadletter.New(c, url).DeadLetter(t.Context(), msg, errors.New(strings.Repeat("r", 10_000))); err != nil {
		t.Fatalf("DeadLetter: %v", err)
	}
	got := receiveAll(t, c, url)
	if len(got) != 1 {
		t.Fatalf("received %d messages; want 1", len(got))
	}
	if r := attr(got[0], deadletter.AttrReason); len(r) < deadletter.MinReasonBytes || len(r) > 5000 {
		t.Errorf("reason is %d bytes; want between %d and what is left of 1 MiB", len(r), deadletter.MinReasonBytes)
	}
}
