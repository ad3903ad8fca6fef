package batch

import (
	"fmt"
	"testing"
)

func TestGroups_keep_batch_order_and_put_an_ungrouped_item_alone(t *testing.T) {
	items := []Item{{Group: "a"}, {Group: "b"}, {}, {Group: "a"}, {}, {Group: "b"}}
	if got, want := fmt.Sprint(groupsOf(items)), "[[0 3] [1 5] [2] [4]]"; got != want {
		t.Errorf("Groups = %s; want %s", got, want)
	}
}
