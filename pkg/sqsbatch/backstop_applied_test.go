package sqsbatch_test

import (
	"slices"
	"testing"

	"github.com/onceflow/onceflow/pkg/operator"
)

// a/1 commits, a/2 behind it in the same batch makes every invocation time out (Lambda kills
// it: nothing of the batch is acknowledged), so both come back on every receive. On the last
// receives the backstop holds the group naming each message before handling it: a/1, already
// applied, is then put on the hold after a/2, and its duplicate, not heading the hold, does not
// take it off. The queue moves both. Once the cause is fixed and the letters are redriven in
// order, the group must go on: a/3 applied after a/1 and a/2, nothing held.
func TestBackstop_an_applied_message_received_again_is_not_left_on_the_hold(t *testing.T) {
	r, h, p, q, records := movedByTheQueue(t, "a/2", false) // timed out: nothing acknowledged
	admin := operator.New(r.db, records)
	hold, _, _ := admin.Hold(t.Context(), "ledger", "a")
	t.Logf("hold after the queue moved both: %v", hold.Held)

	delete(h.hangs, r.eventID(t, "a/2"))       // the cause is fixed
	for _, m := range []string{"a/1", "a/2"} { // the redrive, in order, new message ids
		q.send(t, m+"@"+m+"-redriven")
	}
	q.drain(t, p)
	q.send(t, "a/3")
	q.drain(t, p)
	if hold, ok, err := admin.Hold(t.Context(), "ledger", "a"); err != nil || ok {
		t.Errorf("after the redrive group a is still held: %v (%v, %v)", hold.Held, ok, err)
	}
	want := []string{r.eventID(t, "a/1"), r.eventID(t, "a/2"), r.eventID(t, "a/3")}
	if got := r.applied(t, "a"); !slices.Equal(got, want) {
		t.Errorf("group a applied %v; want %v", got, want)
	}
}
