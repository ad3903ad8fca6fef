package api_test

import (
	"context"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/onceflow/onceflow/internal/api"
	"github.com/onceflow/onceflow/internal/ledger"
	"github.com/onceflow/onceflow/pkg/outbox"
	"github.com/onceflow/onceflow/pkg/testkit"
)

// clock is a settable clock for the API: tests move it to simulate days passing.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }

func (c *clock) advance(d time.Duration) { c.mu.Lock(); defer c.mu.Unlock(); c.t = c.t.Add(d) }

// newClockedFixture is newFixture with an API whose clock the test moves.
func newClockedFixture(t *testing.T) (*fixture, *clock) {
	t.Helper()
	t.Parallel()
	f := &fixture{db: testkit.DynamoDB(t)}
	f.table, _ = testkit.StreamTable(t, f.db, "app")
	c := &clock{t: now}
	h, err := api.New(api.Config{DB: f.db, Table: f.table, Now: c.Now})
	if err != nil {
		t.Fatal(err)
	}
	f.h = h
	return f, c
}

// expireOutbox deletes the outbox item of the account's eventID, as DynamoDB's TTL does once it
// expired.
func (f *fixture) expireOutbox(t *testing.T, accountID, eventID string) {
	t.Helper()
	if _, err := f.db.DeleteItem(context.Background(), &dynamodb.DeleteItemInput{TableName: aws.String(f.table),
		Key: outbox.Key(accountID, eventID)}); err != nil {
		t.Fatal(err)
	}
}

func statusPath(account, reference string) string {
	return "/accounts/" + account + "/movements/" + reference
}

func (f *fixture) getPath(t *testing.T, path string) (int, map[string]any) {
	t.Helper()
	req := sample(t, "api-get-movement.json")
	req.RawPath, req.RequestContext.HTTP.Path = path, path
	return f.do(t, req)
}

func TestAPI_a_reference_answers_the_same_after_its_outbox_event_expired(t *testing.T) {
	tests := []struct {
		name  string
		after time.Duration
	}{
		{"after the outbox item's 7 days", outbox.Retention + time.Hour},
		{"after the ledger record's 30 days", 31 * 24 * time.Hour},
		{"after a year", 366 * 24 * time.Hour},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, c := newClockedFixture(t)
			req := sample(t, "api-credit.json")
			status, first := f.do(t, req)
			if status != http.StatusAccepted {
				t.Fatalf("first credit = %d %v; want 202", status, first)
			}
			f.expireOutbox(t, first["accountId"].(string), first["eventId"].(string))
			c.advance(tt.after)

			status, again := f.do(t, req)
			if status != http.StatusAccepted || again["eventId"] != first["eventId"] {
				t.Fatalf("retry = %d %v; want 202 with event %v", status, again, first["eventId"])
			}
			if got := f.kinds(t); got["outbox"] != 0 {
				t.Fatalf("items by kind = %v; want no new outbox event for a retried reference", got)
			}
			status, body := f.do(t, withBody(req, `{"amount":1,"reference":"invoice-2026-0042"}`))
			if status != http.StatusUnprocessableEntity || body["field"] != "reference" {
				t.Fatalf("same reference, other amount = %d %v; want 422 naming reference", status, body)
			}
			if got := f.kinds(t); got["outbox"] != 0 {
				t.Fatalf("items by kind = %v; want no outbox event for a conflicting reference", got)
			}
		})
	}
}

func TestAPI_a_reference_used_for_a_credit_is_422_for_a_debit_of_the_same_amount(t *testing.T) {
	f := newFixture(t)
	f.do(t, withBody(sample(t, "api-credit.json"), `{"amount":1200,"reference":"order-2026-0099"}`))
	status, body := f.do(t, sample(t, "api-debit.json"))
	if status != http.StatusUnprocessableEntity || body["field"] != "reference" {
		t.Fatalf("debit with a credit's reference = %d %v; want 422 naming reference", status, body)
	}
}

func TestAPI_a_movement_answers_202_with_the_Location_of_its_status(t *testing.T) {
	f := newFixture(t)
	for _, name := range []string{"api-credit.json", "api-debit.json"} {
		t.Run(name, func(t *testing.T) {
			req := sample(t, name)
			for range 2 { // the first answer and a retry's
				resp, err := f.h.Handle(context.Background(), req)
				if err != nil || resp.StatusCode != http.StatusAccepted {
					t.Fatalf("movement = %d %s %v; want 202", resp.StatusCode, resp.Body, err)
				}
				loc := resp.Headers["Location"]
				status, body := f.getPath(t, loc)
				if status != http.StatusOK || body["status"] != "pending" || body["eventId"] == nil || body["eventId"] == "" {
					t.Fatalf("GET %q = %d %v; want 200, pending with the event id", loc, status, body)
				}
				if _, ok := body["reason"]; ok {
					t.Fatalf("a pending movement has a reason: %v", body)
				}
			}
		})
	}
}

func TestAPI_movement_status_of_an_unknown_reference_is_404(t *testing.T) {
	f := newFixture(t)
	f.do(t, sample(t, "api-credit.json"))
	tests := []struct {
		name, path string
		status     int
	}{
		{"unknown reference", statusPath("acc-1001", "invoice-unknown"), http.StatusNotFound},
		{"known reference on another account", statusPath("acc-2002", "invoice-2026-0042"), http.StatusNotFound},
		{"bad account id", statusPath("acc!", "invoice-2026-0042"), http.StatusBadRequest},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if status, body := f.getPath(t, tt.path); status != tt.status {
				t.Fatalf("GET %s = %d %v; want %d", tt.path, status, body, tt.status)
			}
		})
	}
}

func TestAPI_movement_status_follows_the_ledger(t *testing.T) {
	f := newFixture(t)
	_, accepted := f.do(t, sample(t, "api-credit.json"))
	ev, err := ledger.NewEvent(ledger.Credited, "acc-1001", "invoice-2026-0042", 5000, now)
	if err != nil {
		t.Fatal(err)
	}
	if ev.ID != accepted["eventId"] {
		t.Fatalf("event %s; want the API's %v", ev.ID, accepted["eventId"])
	}
	apply(t, f, ev)
	status, body := f.getPath(t, statusPath("acc-1001", "invoice-2026-0042"))
	if status != http.StatusOK || body["status"] != "applied" || body["eventId"] != ev.ID || body["at"] != now.Format(time.RFC3339Nano) {
		t.Fatalf("status after the ledger applied it = %d %v; want applied at %s", status, body, now.Format(time.RFC3339Nano))
	}
}
