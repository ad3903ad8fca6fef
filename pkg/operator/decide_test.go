package operator_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/onceflow/onceflow/pkg/internal/holdlist"
	"github.com/onceflow/onceflow/pkg/operator"
)

// An operator's skips and release act on the whole list of a hold over pages: each skip takes
// the head off and the next becomes the head, page after page, and a release deletes the list
// with its pages and keeps the skips.
func TestAdmin_skip_and_release_of_a_hold_over_pages_act_on_the_whole_list(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	counter := unique(t)
	name := "paged-" + counter
	c := f.consumer(t, name, holding)
	id := func(i int) string { return fmt.Sprintf("%s-%03d", counter, i) }
	list := make([]holdlist.Held, 120)
	for i := range list {
		list[i] = holdlist.Held{EventID: id(i), MessageID: fmt.Sprintf("m-%d", i), Reason: strings.Repeat("r", 1000)}
	}
	if err := engineOf(c).HoldMessages(ctx, "acct", list); err != nil {
		t.Fatal(err)
	}
	a := operator.New(f.db, f.records)
	const skips = 40 // past the hold's own item's entries, into its first page
	for i := range skips {
		h, ok, err := a.Hold(ctx, name, "acct")
		if err != nil || !ok || len(h.Held) != len(list)-i || h.Held[0].EventID != id(i) {
			t.Fatalf("before skip %d: %d held, head %v, %v, %v; want %d, head %s", i, len(h.Held), h.BlockerEventID, ok, err, len(list)-i, id(i))
		}
		if _, err := a.SkipBlocker(ctx, h, "ops", "test"); err != nil {
			t.Fatalf("skip %d: %v", i, err)
		}
	}
	h, ok, err := a.Hold(ctx, name, "acct")
	if err != nil || !ok || len(h.Held) != len(list)-skips || h.Held[0].EventID != id(skips) || len(h.Skipped) != skips {
		t.Fatalf("after the skips: %d held, head %s, %d skipped, %v, %v", len(h.Held), h.BlockerEventID, len(h.Skipped), ok, err)
	}
	for i, e := range h.Held {
		if e.EventID != id(skips+i) {
			t.Fatalf("entry %d is %s; want %s: the list in order", i, e, id(skips+i))
		}
	}
	if err := a.ReleaseHoldIf(ctx, h); err != nil {
		t.Fatal(err)
	}
	if h, ok, err := a.Hold(ctx, name, "acct"); err != nil || ok || len(h.Skipped) != skips {
		t.Errorf("after the release: held %v (%d), %d skips kept, %v; want nothing held, the skips kept", ok, len(h.Held), len(h.Skipped), err)
	}
	if keys := f.holdKeys(t, name, "acct"); len(keys) != 1 {
		t.Errorf("hold items after the release: %q; want its own alone (keeping the skips), the pages deleted", keys)
	}
}
