package main

import (
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"strings"
	"testing"

	"github.com/aws/aws-lambda-go/events"

	"github.com/onceflow/onceflow/pkg/cloudevent"
	"github.com/onceflow/onceflow/pkg/deadletter"
	"github.com/onceflow/onceflow/pkg/operator"
	"github.com/onceflow/onceflow/pkg/port"
	"github.com/onceflow/onceflow/pkg/testkit"
)

// heldLetter dead-letters event id of group as the ledger does (the group held behind it) and
// returns the message id it was first sent as.
func (c *cloud) heldLetter(t *testing.T, id, group string) string {
	t.Helper()
	body, _ := cloudevent.Encode(event(t, id, "account.credited", group))
	msg := events.SQSMessage{MessageId: "m-" + id, Body: string(body), EventSourceARN: c.e.Queues["LedgerQueue"].ARN,
		Attributes: map[string]string{"MessageGroupId": group, "MessageDeduplicationId": id}}
	reason := errors.New("malformed message: data.amount: not a number")
	if err := holdAhead(t.Context(), c.ledger(t), group, port.Held{EventID: id, MessageID: msg.MessageId}, reason); err != nil {
		t.Fatal(err)
	}
	if err := deadletter.New(c.sqs, c.e.Queues["LedgerDeadLetterQueue"].URL).DeadLetter(t.Context(), msg, reason); err != nil {
		t.Fatal(err)
	}
	return msg.MessageId
}

// decidedBy is who the ledger's record of event id says decided it ("" without a record).
func (c *cloud) decidedBy(t *testing.T, id string) string {
	t.Helper()
	rec, _, err := operator.New(c.db, c.tableName("IdempotencyTable")).Record(t.Context(), "ledger", id)
	if err != nil {
		t.Fatal(err)
	}
	return rec.Operator
}

// On the local cloud a decision without --by is recorded as the local name local:USER@HOST;
// an empty --by is refused before anything is done: no decision is recorded by nobody.
func TestDecisions_on_the_local_cloud_are_recorded_by_the_local_name_and_never_by_nobody(t *testing.T) {
	t.Parallel()
	c := newCloud(t)
	c.heldLetter(t, "by-1", "acct-by-1")
	c.heldLetter(t, "by-2", "acct-by-2")
	discard := []string{"dlq", "discard", "--queue", "LedgerDeadLetterQueue", "--consumer", "ledger", "--why", "producer bug", "--yes"}
	for _, by := range []string{"", " "} {
		code, out := c.onceflow(t, "", append(discard, "--by", by, "by-1")...)
		if code != 2 || !strings.Contains(out, "-by") || !strings.Contains(out, "who decided") {
			t.Errorf("--by %q: %d; want a usage error saying a decision is recorded with who decided", by, code)
		}
	}
	if by := c.decidedBy(t, "by-1"); by != "" || c.count(t, c.e.Queues["LedgerDeadLetterQueue"].URL) != 2 {
		t.Fatalf("after an empty --by: recorded by %q, %d letters; want nothing done", by, c.count(t, c.e.Queues["LedgerDeadLetterQueue"].URL))
	}
	local, _ := localCaller(t.Context())
	if !strings.HasPrefix(local, "local:") || !strings.Contains(local, "@") || strings.HasPrefix(local, "local:@") {
		t.Fatalf("the local name is %q; want local:USER@HOST", local)
	}
	if code, out := c.onceflow(t, "", append(discard, "by-1")...); code != 0 || !strings.Contains(out, "deciding as "+local) {
		t.Fatalf("dlq discard without --by: %d; want it decided as %s", code, local)
	}
	if by := c.decidedBy(t, "by-1"); by != local {
		t.Errorf("discarded by %q; want %q", by, local)
	}
	if code, _ := c.onceflow(t, "", "hold", "skip", "--consumer", "ledger", "--why", "later", "--yes", "acct-by-2"); code != 0 {
		t.Fatalf("hold skip without --by: %d", code)
	}
	h, _, err := operator.New(c.db, c.tableName("IdempotencyTable")).Hold(t.Context(), "ledger", "acct-by-2")
	if err != nil || len(h.Skipped) != 1 || h.Skipped[0].By != local {
		t.Errorf("skips %+v, %v; want one by %s", h.Skipped, err, local)
	}
}

// stsStandIn answers sts:GetCallerIdentity with arn, as AWS documents the answer, to a request
// the SDK signed (STS has no emulator: the test checks the request and the tool's reading of
// the answer, SQS and DynamoDB being the emulators).
func stsStandIn(t *testing.T, arn string) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		form, _ := url.ParseQuery(string(b))
		if form.Get("Action") != "GetCallerIdentity" || !strings.Contains(r.Header.Get("Authorization"), "Credential=operator/") {
			http.Error(w, "unexpected request", http.StatusBadRequest)
			return
		}
		w.Header().Set("Content-Type", "text/xml")
		_, _ = io.WriteString(w, `<GetCallerIdentityResponse xmlns="https://sts.amazonaws.com/doc/2011-06-15/"><GetCallerIdentityResult>`+
			`<Arn>`+arn+`</Arn><UserId>AROAEXAMPLE:alice</UserId><Account>123456789012</Account>`+
			`</GetCallerIdentityResult><ResponseMetadata><RequestId>01234567-89ab-cdef-0123-456789abcdef</RequestId></ResponseMetadata></GetCallerIdentityResponse>`)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// On AWS a decision without --by is recorded as the ARN sts:GetCallerIdentity answers for
// the credentials; when STS cannot say, nothing is decided and the error asks for --by.
func TestDecisions_on_AWS_are_recorded_by_the_callers_ARN(t *testing.T) {
	c := newCloud(t)
	c.heldLetter(t, "arn-1", "acct-arn-1")
	const arn = "arn:aws:sts::123456789012:assumed-role/Operator/alice"
	dead, _ := listener(t)
	t.Setenv("AWS_ACCESS_KEY_ID", "operator")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "operator-secret")
	t.Setenv("AWS_REGION", "us-east-1")
	t.Setenv("AWS_MAX_ATTEMPTS", "1")
	t.Setenv("AWS_CONFIG_FILE", filepath.Join(t.TempDir(), "none"))
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", filepath.Join(t.TempDir(), "none"))
	t.Setenv("AWS_ENDPOINT_URL_SQS", emulator(t, testkit.SQSEndpointVariable))
	t.Setenv("AWS_ENDPOINT_URL_DYNAMODB", emulator(t, testkit.EndpointVariable))
	discard := []string{"dlq", "discard", "--queue", c.e.Queues["LedgerDeadLetterQueue"].URL, "--table", c.tableName("IdempotencyTable"),
		"--consumer", "ledger", "--why", "producer bug", "--yes", "arn-1"}
	t.Setenv("AWS_ENDPOINT_URL_STS", dead)
	if code, out := bare(t, discard...); code != 1 || !strings.Contains(out, "GetCallerIdentity") || !strings.Contains(out, "--by") {
		t.Errorf("dlq discard, STS unreachable: %d; want a failure asking for --by", code)
	}
	if by := c.decidedBy(t, "arn-1"); by != "" {
		t.Fatalf("recorded by %q though STS did not say who; want nothing recorded", by)
	}
	t.Setenv("AWS_ENDPOINT_URL_STS", stsStandIn(t, arn))
	if code, out := bare(t, discard...); code != 0 || !strings.Contains(out, "deciding as "+arn) {
		t.Fatalf("dlq discard without --by: %d; want it decided as %s", code, arn)
	}
	if by := c.decidedBy(t, "arn-1"); by != arn {
		t.Errorf("discarded by %q; want %q", by, arn)
	}
}

// bare runs the command as on AWS (no --local), and returns its exit status and output.
func bare(t *testing.T, args ...string) (int, string) {
	t.Helper()
	var out strings.Builder
	code := run(t.Context(), args, strings.NewReader(""), &out, &out)
	t.Logf("onceflow %s -> %d\n%s", strings.Join(args[:2], " "), code, out.String())
	return code, out.String()
}
