package batch_test

import (
	"fmt"
	"testing"

	"github.com/onceflow/onceflow/pkg/batch"
)

func TestGroups_keep_batch_order_and_put_an_ungrouped_item_alone(t *testing.T) {
	items := []batch.Item{{Group: "a"}, {Group: "b"}, {}, {Group: "a"}, {}, {Group: "b"}}
	if got, want := fmt.Sprint(batch.Groups(items)), "[[0 3] [1 5] [2] [4]]"; got != want {
		t.Errorf("Groups = %s; want %s", got, want)
	}
}

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
