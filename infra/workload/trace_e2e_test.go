package workload_test

import (
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/onceflow/onceflow/infra/localcloud"
	"github.com/onceflow/onceflow/pkg/testkit"
	"github.com/onceflow/onceflow/pkg/xray"
)

// traced returns c sending header as every request's X-Amzn-Trace-Id.
func traced(c *http.Client, header string) *http.Client {
	base := c.Transport
	if base == nil {
		base = http.DefaultTransport
	}
	return &http.Client{Transport: roundTripper(func(r *http.Request) (*http.Response, error) {
		r.Header.Set(xray.HTTPHeader, header)
		return base.RoundTrip(r)
	})}
}

// checkTraces sends a note and a credit, each with its own trace header, and waits for every
// consumer of their events to log its outcome under that request's trace id: the header went
// from the API request to the outbox item, through the relay to the message's AWSTraceHeader,
// and from the SQS event to the consumer's log line.
func checkTraces(t *testing.T, cloud *localcloud.Cloud) {
	ep := cloud.Endpoints()
	noteTrace, creditTrace := xray.NewHeader(time.Now()), xray.NewHeader(time.Now())
	status, note := call(t, traced(ep.APIClient("alice", "notes.write"), noteTrace), "POST", ep.APIURL+"/notes",
		`{"title":"Traced","content":"about #traces"}`)
	if status != 201 {
		t.Fatalf("create note = %d %v", status, note)
	}
	acct := fmt.Sprintf("e2e-trace-%d", time.Now().UnixNano())
	status, credit := call(t, traced(ep.APIClient("payments", "ledger.write"), creditTrace), "POST",
		ep.APIURL+"/accounts/"+acct+"/credits", `{"amount":5,"reference":"trace-1"}`)
	if status != 202 {
		t.Fatalf("credit = %d %v", status, credit)
	}
	want := []struct{ function, eventID, trace string }{
		{"NoteTaggerFunction", "note-created-" + note["id"].(string), noteTrace},
		{"NoteNotifierFunction", "note-created-" + note["id"].(string), noteTrace},
		{"LedgerFunction", credit["eventId"].(string), creditTrace},
	}
	for _, w := range want {
		testkit.Eventually(t, 90*time.Second, func() error {
			lines, err := localcloud.ReadLogs(cloud.StateDir(), w.function)
			if err != nil {
				return err
			}
			for _, l := range lines {
				if l.Attr("eventId") == w.eventID && l.Attr("outcome") == "applied" {
					if got := l.Attr("xray_trace_id"); got != xray.TraceID(w.trace) {
						return fmt.Errorf("%s logged %s applied under trace %q, want the request's %q: %s",
							w.function, w.eventID, got, xray.TraceID(w.trace), l.Format())
					}
					if l.Attr("idempotency_key") == "" {
						return fmt.Errorf("%s logged %s without its idempotency_key: %s", w.function, w.eventID, l.Format())
					}
					return nil
				}
			}
			return fmt.Errorf("%s has not logged %s applied yet", w.function, w.eventID)
		})
	}
}
