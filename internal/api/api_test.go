package api_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/onceflow/onceflow/internal/api"
	"github.com/onceflow/onceflow/internal/apptest"
	"github.com/onceflow/onceflow/internal/ledger"
	"github.com/onceflow/onceflow/internal/notes"
	"github.com/onceflow/onceflow/pkg/cloudevent"
	"github.com/onceflow/onceflow/pkg/idempotency"
	"github.com/onceflow/onceflow/pkg/testkit"
)

var now = time.Date(2026, 11, 30, 6, 0, 0, 0, time.UTC)

type fixture struct {
	db    *dynamodb.Client
	table string
	h     *api.Handler
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	t.Parallel()
	f := &fixture{db: testkit.DynamoDB(t)}
	f.table, _ = testkit.StreamTable(t, f.db, "app")
	h, err := api.New(api.Config{DB: f.db, Table: f.table, Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	f.h = h
	return f
}

func (f *fixture) do(t *testing.T, req events.APIGatewayV2HTTPRequest) (int, map[string]any) {
	t.Helper()
	resp, err := f.h.Handle(context.Background(), req)
	if err != nil {
		t.Fatalf("Handle returned an error: %v", err)
	}
	var body map[string]any
	if err := json.Unmarshal([]byte(resp.Body), &body); err != nil {
		t.Fatalf("response body %q is not a JSON object: %v", resp.Body, err)
	}
	return resp.StatusCode, body
}

// kinds counts the app table's items by kind.
func (f *fixture) kinds(t *testing.T) map[string]int {
	t.Helper()
	out, err := f.db.Scan(context.Background(), &dynamodb.ScanInput{TableName: aws.String(f.table), ConsistentRead: aws.Bool(true)})
	if err != nil {
		t.Fatal(err)
	}
	n := map[string]int{}
	for _, item := range out.Items {
		var k struct {
			Kind string `dynamodbav:"kind"`
		}
		_ = attributevalue.UnmarshalMap(item, &k)
		n[k.Kind]++
	}
	return n
}

func sample(t *testing.T, name string) events.APIGatewayV2HTTPRequest {
	t.Helper()
	var req events.APIGatewayV2HTTPRequest
	apptest.LoadEvent(t, name, &req)
	return req
}

func withBody(req events.APIGatewayV2HTTPRequest, body string) events.APIGatewayV2HTTPRequest {
	req.Body = body
	return req
}

func TestAPI_create_note_writes_the_note_and_one_outbox_event(t *testing.T) {
	f := newFixture(t)
	status, body := f.do(t, sample(t, "api-create-note.json"))
	if status != http.StatusCreated || body["id"] == "" || body["title"] != "Trip to #Lisbon" {
		t.Fatalf("create note = %d %v; want 201 with the note", status, body)
	}
	if got := f.kinds(t); got["note"] != 1 || got["outbox"] != 1 || got["request"] != 1 {
		t.Fatalf("items by kind = %v; want one note, one outbox event, one request", got)
	}
	id := body["id"].(string)
	get := sample(t, "api-get-note.json")
	get.RawPath, get.RequestContext.HTTP.Path = "/notes/"+id, "/notes/"+id
	status, got := f.do(t, get)
	if status != http.StatusOK || got["id"] != id || got["content"] == "" {
		t.Fatalf("GET /notes/%s = %d %v; want 200 and the note", id, status, got)
	}
	if tags, ok := got["tags"].([]any); !ok || len(tags) != 0 {
		t.Fatalf("tags before tagging = %v; want []", got["tags"])
	}
}

func TestAPI_create_note_retried_with_the_same_key_returns_the_same_note(t *testing.T) {
	f := newFixture(t)
	req := sample(t, "api-create-note.json")
	status1, first := f.do(t, req)
	status2, second := f.do(t, req)
	if status1 != http.StatusCreated || status2 != http.StatusOK {
		t.Fatalf("statuses = %d then %d; want 201 then 200", status1, status2)
	}
	if first["id"] != second["id"] {
		t.Fatalf("retry returned note %v; want %v", second["id"], first["id"])
	}
	if got := f.kinds(t); got["note"] != 1 || got["outbox"] != 1 {
		t.Fatalf("items by kind = %v; want one note and one outbox event", got)
	}
}

func TestAPI_create_note_with_a_used_key_and_another_body_is_422(t *testing.T) {
	f := newFixture(t)
	req := sample(t, "api-create-note.json")
	f.do(t, req)
	status, body := f.do(t, withBody(req, `{"title":"Another","content":"body"}`))
	if status != http.StatusUnprocessableEntity || body["field"] != api.IdempotencyKeyHeader {
		t.Fatalf("reused key = %d %v; want 422 naming %s", status, body, api.IdempotencyKeyHeader)
	}
	if got := f.kinds(t); got["note"] != 1 || got["outbox"] != 1 {
		t.Fatalf("items by kind = %v; want still one note and one outbox event", got)
	}
}

func TestAPI_movement_retried_with_the_same_reference_records_one_event(t *testing.T) {
	tests := []struct {
		name   string
		sample string
		typ    string
	}{
		{"credit", "api-credit.json", ledger.Credited},
		{"debit", "api-debit.json", ledger.Debited},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t)
			req := sample(t, tt.sample)
			_, first := f.do(t, req)
			status, second := f.do(t, req)
			if status != http.StatusAccepted || first["eventId"] != second["eventId"] || second["type"] != tt.typ {
				t.Fatalf("retry = %d %v; want 202 with event %v", status, second, first["eventId"])
			}
			if got := f.kinds(t); got["outbox"] != 1 || got["movement"] != 1 || len(got) != 2 {
				t.Fatalf("items by kind = %v; want exactly one movement and one outbox event", got)
			}
			status, body := f.do(t, withBody(req, `{"amount":1,"reference":"`+second["reference"].(string)+`"}`))
			if status != http.StatusUnprocessableEntity || body["field"] != "reference" {
				t.Fatalf("same reference, other amount = %d %v; want 422 naming reference", status, body)
			}
		})
	}
}

func TestAPI_bad_input_is_400_naming_the_field_and_writes_nothing(t *testing.T) {
	f := newFixture(t)
	note, credit := sample(t, "api-create-note.json"), sample(t, "api-credit.json")
	tests := []struct {
		name  string
		req   events.APIGatewayV2HTTPRequest
		field string
	}{
		{"title of the wrong type (sample)", sample(t, "api-create-note-bad-body.json"), "title"},
		{"negative amount (sample)", sample(t, "api-debit-bad-amount.json"), "amount"},
		{"missing title", withBody(note, `{"content":"x"}`), "title"},
		{"missing content", withBody(note, `{"title":"x"}`), "content"},
		{"unknown field", withBody(note, `{"title":"x","content":"y","color":"red"}`), "color"},
		{"not JSON", withBody(note, `title=x`), "body"},
		{"empty body", withBody(note, ``), "body"},
		{"two objects", withBody(note, `{"title":"x","content":"y"}{}`), "body"},
		{"content too long", withBody(note, `{"title":"x","content":"`+strings.Repeat("é", notes.MaxContent/2+1)+`"}`), "content"},
		{"title too long", withBody(note, `{"title":"`+strings.Repeat("t", notes.MaxTitle+1)+`","content":""}`), "title"},
		{"fractional amount", withBody(credit, `{"amount":1.5,"reference":"r"}`), "amount"},
		{"zero amount", withBody(credit, `{"amount":0,"reference":"r"}`), "amount"},
		{"missing amount", withBody(credit, `{"reference":"r"}`), "amount"},
		{"missing reference", withBody(credit, `{"amount":5}`), "reference"},
		{"amount as a string", withBody(credit, `{"amount":"5","reference":"r"}`), "amount"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			status, body := f.do(t, tt.req)
			if status != http.StatusBadRequest || body["field"] != tt.field || body["error"] == "" {
				t.Fatalf("got %d %v; want 400 naming %q", status, body, tt.field)
			}
		})
	}
	if got := f.kinds(t); len(got) != 0 {
		t.Fatalf("items by kind = %v; want nothing written", got)
	}
}

func TestAPI_text_SQS_refuses_is_400_naming_the_field_and_writes_nothing(t *testing.T) {
	f := newFixture(t)
	note, credit := sample(t, "api-create-note.json"), sample(t, "api-credit.json")
	tests := []struct {
		name  string
		req   events.APIGatewayV2HTTPRequest
		field string
	}{
		{"NUL in the title", withBody(note, `{"title":"a\u0000b","content":"x"}`), "title"},
		{"a control character in the content", withBody(note, `{"title":"x","content":"#go \u001b[31m"}`), "content"},
		{"U+FFFE in a tag", withBody(note, `{"title":"x","content":"#go\ufffe"}`), "content"},
		{"U+FFFF in the reference", withBody(credit, `{"amount":5,"reference":"r\uffff"}`), "reference"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			status, body := f.do(t, tt.req)
			if status != http.StatusBadRequest || body["field"] != tt.field || !strings.Contains(fmt.Sprint(body["error"]), "SQS") {
				t.Fatalf("got %d %v; want 400 naming %q and saying SQS refuses it", status, body, tt.field)
			}
		})
	}
	if got := f.kinds(t); len(got) != 0 {
		t.Fatalf("items by kind = %v; want nothing written", got)
	}
}

func TestAPI_unknown_route_is_404(t *testing.T) {
	f := newFixture(t)
	base := sample(t, "api-get-note.json")
	for _, tc := range []struct{ method, path string }{
		{"DELETE", "/notes/note-7f3a"}, {"GET", "/"}, {"GET", "/notes"}, {"POST", "/accounts/a/refunds"},
		{"GET", "/accounts/a/credits"}, {"PUT", "/notes"},
	} {
		t.Run(tc.method+" "+tc.path, func(t *testing.T) {
			req := base
			req.RequestContext.HTTP.Method, req.RawPath = tc.method, tc.path
			if status, body := f.do(t, req); status != http.StatusNotFound {
				t.Fatalf("got %d %v; want 404", status, body)
			}
		})
	}
	if status, _ := f.do(t, sample(t, "api-unknown-route.json")); status != http.StatusNotFound {
		t.Fatalf("unknown-route sample = %d; want 404", status)
	}
}

func TestAPI_reads_missing_entities(t *testing.T) {
	f := newFixture(t)
	tests := []struct {
		sample string
		status int
		want   map[string]any
	}{
		{"api-get-note.json", http.StatusNotFound, nil},
		{"api-get-account.json", http.StatusNotFound, nil},
		{"api-get-movement.json", http.StatusNotFound, nil},
		{"api-get-tag.json", http.StatusOK, map[string]any{"tag": "travel", "count": 0.0}},
	}
	for _, tt := range tests {
		t.Run(tt.sample, func(t *testing.T) {
			status, body := f.do(t, sample(t, tt.sample))
			if status != tt.status {
				t.Fatalf("got %d %v; want %d", status, body, tt.status)
			}
			for k, v := range tt.want {
				if body[k] != v {
					t.Fatalf("%s = %v; want %v", k, body[k], v)
				}
			}
		})
	}
}

func TestAPI_get_account_shows_balance_and_entries(t *testing.T) {
	f := newFixture(t)
	for i, amount := range []int64{5000, 700} {
		ev, err := ledger.NewEvent(ledger.Credited, "acc-1001", "ref-"+string(rune('a'+i)), amount, now.Add(time.Duration(i)*time.Second))
		if err != nil {
			t.Fatal(err)
		}
		apply(t, f, ev)
	}
	status, body := f.do(t, sample(t, "api-get-account.json"))
	entries, _ := body["entries"].([]any)
	if status != http.StatusOK || body["id"] != "acc-1001" || body["balance"] != 5700.0 || len(entries) != 2 {
		t.Fatalf("GET account = %d %v; want balance 5700 and two entries", status, body)
	}
}

// apply commits a ledger event's effect directly: effects are data.
func apply(t *testing.T, f *fixture, ev cloudevent.Event) {
	t.Helper()
	var d ledger.MovementData
	if err := cloudevent.DecodeData(ev, &d); err != nil {
		t.Fatal(err)
	}
	eff, err := ledger.Credit(f.table, ev, d)
	if err != nil {
		t.Fatal(err)
	}
	f.commit(t, eff)
}

// commit writes an effect's items in one transaction, as its consumer does.
func (f *fixture) commit(t *testing.T, eff idempotency.Effect) {
	t.Helper()
	items, err := eff.TransactWriteItems()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.db.TransactWriteItems(context.Background(), &dynamodb.TransactWriteItemsInput{TransactItems: items}); err != nil {
		t.Fatal(err)
	}
}

func TestAPI_concurrent_requests_with_one_key_create_one_note(t *testing.T) {
	f := newFixture(t)
	req := sample(t, "api-create-note.json")
	type answer struct {
		status int
		id     any
	}
	answers := make(chan answer, 8)
	for range 8 {
		go func() {
			resp, _ := f.h.Handle(context.Background(), req)
			var body map[string]any
			_ = json.Unmarshal([]byte(resp.Body), &body)
			answers <- answer{resp.StatusCode, body["id"]}
		}()
	}
	seen := map[any]bool{}
	for range 8 {
		a := <-answers
		s, id := a.status, a.id
		if s != http.StatusCreated && s != http.StatusOK && s != http.StatusServiceUnavailable {
			t.Fatalf("status %d; want 201, 200 or a retryable 503", s)
		}
		if s != http.StatusServiceUnavailable {
			seen[id] = true
		}
	}
	if len(seen) != 1 {
		t.Fatalf("concurrent requests answered notes %v; want one", seen)
	}
	if got := f.kinds(t); got["note"] != 1 || got["outbox"] != 1 {
		t.Fatalf("items by kind = %v; want one note and one outbox event", got)
	}
}
