package app_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/aws/aws-lambda-go/events"

	"github.com/onceflow/onceflow/internal/apptest"
)

// A movement held behind a dead-lettered one says so at its status, and behind what: the
// blocker's event id and why it was dead-lettered; the existing fields stay.
func TestLedger_a_movement_held_behind_a_dead_lettered_one_says_held_and_behind_what(t *testing.T) {
	s := newSystem(t)
	_, credit, creditLoc := s.post(t, "api-credit.json", `{"amount":5000,"reference":"invoice-1"}`)
	_, debit, debitLoc := s.post(t, "api-debit.json", `{"amount":1200,"reference":"order-1"}`)
	// Another account, not held: its movement stays plainly pending.
	otherLoc := s.postTo(t, "api-credit.json", "acc-2002", `{"amount":1,"reference":"invoice-1"}`)
	// The credit reaches the ledger malformed (a producer's bug on the way): dead-lettered, and
	// the account is held behind it; the debit after it is held too.
	s.deliverWith(t, credit, 1, func(body string) string {
		return strings.Replace(body, `"amount":5000`, `"amount":"5000"`, 1)
	})
	s.deliver(t, debit, 1)

	for _, tc := range []struct{ name, loc, eventID string }{
		{"the debit behind it", debitLoc, debit},
		{"the blocker itself", creditLoc, credit},
	} {
		got := s.status(t, tc.loc)
		behind, _ := got["heldBehind"].(map[string]any)
		if got["status"] != "held" || got["eventId"] != tc.eventID || behind["eventId"] != credit ||
			behind["reason"] == nil || behind["reason"] == "" || behind["heldAt"] == nil {
			t.Errorf("%s: status = %v; want held, with heldBehind naming %s, a reason and a time", tc.name, got, credit)
		}
	}
	if got := s.status(t, otherLoc); got["status"] != "pending" || got["heldBehind"] != nil {
		t.Errorf("a movement of an account not held: status = %v; want pending, no heldBehind", got)
	}
}

// postTo sends an API sample to account instead of the sample's and returns the Location.
func (s *system) postTo(t *testing.T, sample, account, body string) string {
	t.Helper()
	var req events.APIGatewayV2HTTPRequest
	apptest.LoadEvent(t, sample, &req)
	req.Body = body
	req.RawPath = strings.Replace(req.RawPath, sampleAccount, account, 1)
	req.RequestContext.HTTP.Path = req.RawPath
	resp, err := s.api.Handle(context.Background(), req)
	if err != nil || resp.StatusCode != http.StatusAccepted {
		t.Fatalf("post to %s = %d %s, %v; want 202", account, resp.StatusCode, resp.Body, err)
	}
	return resp.Headers["Location"]
}
