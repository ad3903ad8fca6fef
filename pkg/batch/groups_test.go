package batch_test

import (
	"strings"
	"testing"

	"github.com/onceflow/onceflow/pkg/batch"
)

func TestFirstFailed_is_the_first_record_not_acknowledged(t *testing.T) {
	for _, tc := range []struct {
		out  []batch.Outcome
		want int
	}{
		{[]batch.Outcome{batch.Acked, batch.Acked}, -1},
		{[]batch.Outcome{batch.Acked, batch.Skipped, batch.Failed}, 1},
		{[]batch.Outcome{batch.Acked, batch.Acked, batch.NotStarted}, 2},
		{nil, -1},
	} {
		if got := batch.FirstFailed(tc.out); got != tc.want {
			t.Errorf("FirstFailed(%v) = %d; want %d", tc.out, got, tc.want)
		}
	}
}

func TestGroupID_is_the_key_when_SQS_takes_it_else_its_digest(t *testing.T) {
	long := strings.Repeat("k", 129)
	for _, tc := range []struct {
		key, want string
	}{
		{"pk=ACCT#1|sk=ITEM", "pk=ACCT#1|sk=ITEM"},
		{"a key with spaces", "sha256-"},
		{"clé", "sha256-"},
		{long, "sha256-"},
		{"", "sha256-"},
	} {
		got := batch.GroupID(tc.key)
		if !strings.HasPrefix(got, tc.want) || len(got) > 128 || (tc.want == "sha256-" && got != batch.GroupID(tc.key)) {
			t.Errorf("GroupID(%q) = %q; want it to start with %q, at most 128 characters", tc.key, got, tc.want)
		}
	}
	if batch.GroupID("a b") == batch.GroupID("a c") {
		t.Error("two keys got one digest")
	}
}
