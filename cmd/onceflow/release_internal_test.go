package main

import (
	"strings"
	"testing"
)

// The runbook's last resort: hold release lets a held account go on at once, giving up the
// order of every message it held (their letters stay in the dead-letter queue). Live traffic
// is applied as it comes; once the cause is fixed, a redrive applies the released letters, in
// their order among themselves, and nothing is left held or dead-lettered.
func TestRecovery_hold_release_gives_up_the_order_and_a_redrive_applies_the_released_letters(t *testing.T) {
	t.Parallel()
	c := newCloud(t)
	f := c.pipeline(t, pipelineConfig{})
	f.set(f.failing, true, "e1")
	f.sendNew(t, "acct", "e1", "e2")
	f.consume(t)
	if h, ok := f.hold(t, "acct"); !ok || len(h.Held) != 2 {
		t.Fatalf("after e1 failed: hold %s; want e1 and e2 held", heldList(h))
	}
	if code, out := f.cli(t, "hold", "release", "acct"); code != 0 || !strings.Contains(out, "without the 2 held messages") {
		t.Fatalf("hold release: exit %d; want it to say what it gives up before it asks", code)
	}
	f.sendNew(t, "acct", "e3") // live: applied at once, before the released e1 and e2
	f.consume(t)
	f.wantApplied(t, "acct", "e3")

	f.set(f.failing, false, "e1") // the cause fixed
	if code, out := f.cli(t, "dlq", "redrive"); code != 0 || !strings.Contains(out, "moved 2,") {
		t.Fatalf("dlq redrive: exit %d; want e1 and e2 moved", code)
	}
	f.consume(t)
	f.wantSettled(t, "acct", "after the release and the redrive,", "e3", "e1", "e2")
}
