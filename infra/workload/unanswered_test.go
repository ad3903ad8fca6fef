package workload

import (
	"context"
	"errors"
	"testing"
)

// A movement none of whose attempts was answered may still have been recorded (an attempt
// committed, its answer lost): the chaos run found one applied by the ledger and reported it as
// "unexpected record", the workload having counted it as never sent. Once the traffic is over,
// the API is asked: what it has is accepted, at the place it was sent; a 404 was never recorded.
func TestResolveUnanswered_accepts_what_the_API_recorded_and_only_that(t *testing.T) {
	recorded := &sentMove{Account: "a", Reference: "r1", Unanswered: true, Accepted: 3}
	never := &sentMove{Account: "a", Reference: "r2", Unanswered: true, Accepted: 4}
	answered := &sentMove{Account: "a", Reference: "r3", EventID: "mv-3", Accepted: 5}
	reqs := []request{{move: recorded}, {move: never}, {move: answered}, {note: &sentNote{}}}
	var asked []string
	get := func(_ context.Context, m *sentMove) (movementStatus, bool, error) {
		asked = append(asked, m.Reference)
		if m == recorded {
			return movementStatus{EventID: "mv-1", Status: "applied"}, true, nil
		}
		return movementStatus{}, false, nil
	}
	n, err := resolveUnanswered(context.Background(), reqs, get)
	if err != nil || n != 1 {
		t.Fatalf("resolveUnanswered = %d, %v; want 1 resolved", n, err)
	}
	if len(asked) != 2 || recorded.EventID != "mv-1" || never.EventID != "" || recorded.Accepted != 3 {
		t.Errorf("asked %v; recorded %+v, never %+v: want both unanswered asked, the recorded one accepted at its place, the other not", asked, recorded, never)
	}

	lost := &sentMove{Account: "a", Reference: "r4", Unanswered: true}
	_, err = resolveUnanswered(context.Background(), []request{{move: lost}}, func(context.Context, *sentMove) (movementStatus, bool, error) {
		return movementStatus{}, false, errors.New("503")
	})
	if err == nil {
		t.Error("an unanswered movement whose status cannot be read was taken as settled; want the run to fail on it")
	}
}
