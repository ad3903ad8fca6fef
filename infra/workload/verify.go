package workload

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"sort"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	ddbtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/onceflow/onceflow/infra/gatekeeper"
	"github.com/onceflow/onceflow/internal/ledger"
	"github.com/onceflow/onceflow/internal/notes"
	"github.com/onceflow/onceflow/pkg/idempotency"
	"github.com/onceflow/onceflow/pkg/operator"
)

// verify checks the invariants and adds them to rep.
// It reads the tables as tabs has them: each once, whole, after the drains.
func (r *run) verify(ctx context.Context, rep *Report, malformed map[string][]string, drained error, tabs tables) error {
	add := func(name string, problems []string, ok string) {
		inv := Invariant{Name: name, OK: len(problems) == 0, Detail: ok}
		if !inv.OK {
			if len(problems) > 5 {
				problems = append(problems[:5], fmt.Sprintf("and %d more", len(problems)-5))
			}
			inv.Detail = strings.Join(problems, "; ")
		}
		rep.Invariants = append(rep.Invariants, inv)
	}
	add("the pipeline drained", errs(drained), "every consumer queue empty, every accepted event recorded by each of its consumers")
	add("the API accepted every request, and a retry got the first answer", r.apiProblems(rep),
		fmt.Sprintf("%d requests accepted, %d retries answered alike", len(r.reqs), rep.Retries))
	p, detail := r.accessProblems(ctx)
	add("the API refuses requests without a token or without the right", p, detail)
	recs, items := tabs.recs, tabs.app
	add("every event applied or rejected exactly once per consumer", r.recordProblems(recs),
		fmt.Sprintf("one record per consumer and accepted event (%d events), none other", rep.Accepted))
	p, detail, err := r.accountProblems(ctx, recs)
	if err != nil {
		return err
	}
	add("every account balance equals the sum of its accepted events", p, detail)
	p, detail = r.movementProblems(ctx, recs, items)
	add("every movement's status says what the ledger decided", p, detail)
	p, detail = r.orderProblems(recs)
	add("every account's movements were decided in the order the API accepted them", p, detail)
	p, detail = r.tagProblems(items)
	add("every tag count equals the notes carrying it", p, detail)
	if len(r.t.streams) > 0 {
		p, detail = r.statementProblems(items, recs)
		add("every account's statement has each applied movement once, in order", p, detail)
	}
	p, detail = holdProblems(tabs.idem, malformed)
	add("no group is held at the end", p, detail)
	if r.cfg.Poison > 0 {
		p, detail = r.drillProblems(ctx, recs)
		add("the recovery drill followed the runbook with the CLI under traffic, and every poisoned account recovered", p, detail)
	}
	if r.cfg.Poison > 0 && len(r.t.streams) > 0 {
		p, detail = r.streamDrillProblems(ctx)
		add("the stream recovery drill recovered a held account key with the CLI while its stream went on", p, detail)
	}
	p, detail, err = r.deadLetterProblems(ctx, malformed)
	if err != nil {
		return err
	}
	add("every malformed message is in a dead-letter queue", p, detail)
	p, detail, err = r.stuckProblems(ctx)
	if err != nil {
		return err
	}
	add("no queue has stuck messages", p, detail)
	if cr := r.cfg.Crash; cr != nil {
		var p []string
		if !cr.Fired() {
			p = append(p, fmt.Sprintf("%s was never crashed", cr.Function))
		}
		add("an environment crashed after commit and the pipeline recovered", p,
			fmt.Sprintf("%s killed after a committed batch, restarted, its batch redelivered", cr.Function))
	}
	if p, detail, ok := r.webhookProblems(rep); ok {
		add("every note produced exactly one distinct Idempotency-Key at the receiver", p, detail)
	}
	if a := r.cloud.Stats().Access; a != nil { // as of the end: the summary line says the same
		rep.Access = a
		p, detail := denialProblems(*a)
		add("no call denied: every call of every function was one its role grants", p, detail)
	}
	return nil
}

// denialProblems names every refusal of the gatekeeper: the principal, the action, the
// resource; a refusal is a permission the template does not grant and the code needs.
func denialProblems(a gatekeeper.Stats) ([]string, string) {
	var p []string
	for _, d := range a.Denials {
		s := d.String()
		if d.Closest != "" {
			s += "; closest: " + d.Closest
		}
		p = append(p, s)
	}
	if a.Denied > 0 && len(p) == 0 {
		p = append(p, fmt.Sprintf("%d calls denied", a.Denied))
	}
	return p, fmt.Sprintf("%d calls authorised against their caller's role, none denied", a.Authorized)
}

func errs(err error) []string {
	if err == nil {
		return nil
	}
	return []string{err.Error()}
}

func (r *run) apiProblems(rep *Report) []string {
	var p []string
	if rep.Failed > 0 {
		p = append(p, fmt.Sprintf("%d requests never accepted (answers by status: %v)", rep.Failed, rep.Status))
	}
	for _, q := range r.reqs {
		if (q.note != nil && q.note.Mismatch) || (q.move != nil && q.move.Mismatch) {
			p = append(p, "a retry got another answer than the first request")
		}
	}
	return p
}

func (r *run) recordProblems(recs map[string]operator.Record) []string {
	var p []string
	want := r.discardedKeys()
	for _, keys := range r.expected() {
		for _, k := range keys {
			want[k] = true
			rec, ok := recs[k]
			switch {
			case !ok:
				p = append(p, "no record "+k)
			case rec.Outcome != string(idempotency.Applied) && rec.Outcome != string(idempotency.Rejected):
				p = append(p, fmt.Sprintf("record %s has outcome %q", k, rec.Outcome))
			}
		}
	}
	for k := range recs {
		// Keys starting with "#" are the engine's own items, not records: attempt counts and
		// group holds (a ledger group holds behind its dead-lettered malformed message). The
		// drill's discarded events are expected (drillProblems checks their records).
		if !want[k] && !strings.HasPrefix(k, "#") && !r.streamRecord(k) {
			p = append(p, "unexpected record "+k)
		}
	}
	sort.Strings(p)
	return p
}

// streamRecord says whether k is a record of a stream consumer, whose events are the stream's
// records, not the API's (statementProblems checks what they wrote).
func (r *run) streamRecord(k string) bool {
	for _, sc := range r.t.streams {
		if strings.HasPrefix(k, sc.Name+"#") {
			return true
		}
	}
	return false
}

// account is GET /accounts/{id}, every page of its entries.
type account struct {
	Balance    int64          `json:"balance"`
	Entries    []ledger.Entry `json:"entries"`
	NextCursor string         `json:"nextCursor"`
}

// getAccount reads account id and all its entries, following nextCursor page by page.
func (r *run) getAccount(ctx context.Context, id string) (account, error) {
	var all account
	for cursor, first := "", true; first || cursor != ""; first = false {
		a, found, err := r.accountPage(ctx, id, cursor)
		if err != nil || !found {
			return all, err // not found: no credit was ever applied, no account item, no entry
		}
		all.Balance, all.Entries, cursor = a.Balance, append(all.Entries, a.Entries...), a.NextCursor
	}
	return all, nil
}

func (r *run) accountPage(ctx context.Context, id, cursor string) (account, bool, error) {
	var a account
	q := url.Values{"limit": {"100"}}
	if cursor != "" {
		q.Set("cursor", cursor)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, r.cloud.Endpoints().APIURL+"/accounts/"+url.PathEscape(id)+"?"+q.Encode(), nil)
	if err != nil {
		return a, false, err
	}
	resp, err := r.ownerClient(id).Do(req)
	if err != nil {
		return a, false, fmt.Errorf("get account %s: %w", id, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	switch resp.StatusCode {
	case http.StatusNotFound:
		return a, false, nil
	case http.StatusOK:
		return a, true, json.Unmarshal(b, &a)
	}
	return a, false, fmt.Errorf("get account %s: %d %s", id, resp.StatusCode, b)
}

func (r *run) accountProblems(ctx context.Context, recs map[string]operator.Record) ([]string, string, error) {
	name, byAccount, err := r.ledgerMoves()
	if err != nil {
		return []string{err.Error()}, "", nil
	}
	var p []string
	var entries, rejected int
	var total int64
	for _, id := range sortedKeys((byAccount)) {
		a, err := r.getAccount(ctx, id)
		if err != nil {
			return nil, "", err
		}
		var sum int64
		seen := map[string]ledger.Entry{}
		for _, e := range a.Entries {
			if e.Type == "debit" {
				sum -= e.Amount
			} else {
				sum += e.Amount
			}
			if _, dup := seen[e.EventID]; dup {
				p = append(p, fmt.Sprintf("%s: event %s has two entries", id, e.EventID))
			}
			seen[e.EventID] = e
		}
		if sum != a.Balance {
			p = append(p, fmt.Sprintf("%s: balance %d, entries sum to %d", id, a.Balance, sum))
		}
		if a.Balance < 0 {
			p = append(p, fmt.Sprintf("%s: balance %d is negative", id, a.Balance))
		}
		applied := 0
		for _, m := range byAccount[id] {
			rec := recs[name+"#"+m.EventID]
			e, has := seen[m.EventID]
			wantType := map[string]string{ledger.Credited: "credit", ledger.Debited: "debit"}[m.Type]
			switch {
			case rec.Outcome == string(idempotency.Applied) && !has:
				p = append(p, fmt.Sprintf("%s: applied event %s has no entry", id, m.EventID))
			case rec.Outcome == string(idempotency.Rejected) && has:
				p = append(p, fmt.Sprintf("%s: rejected event %s has an entry", id, m.EventID))
			case rec.Outcome == string(idempotency.Rejected):
				rejected++
			case rec.Outcome == "":
				p = append(p, fmt.Sprintf("%s: event %s is neither an entry nor a recorded rejection", id, m.EventID))
			case e.Amount != m.Amount || e.Type != wantType:
				p = append(p, fmt.Sprintf("%s: entry %s is a %s of %d, the workload sent a %s of %d", id, m.EventID, e.Type, e.Amount, wantType, m.Amount))
			}
			if has {
				applied++
			}
		}
		if applied != len(a.Entries) {
			p = append(p, fmt.Sprintf("%s: %d entries, %d of them for events the workload sent", id, len(a.Entries), applied))
		}
		entries += len(a.Entries)
		total += a.Balance
	}
	return p, fmt.Sprintf("%d accounts: balance = sum of entries and >= 0; %d entries = applied events, %d debits rejected for funds (recorded); total balance %d",
		len(byAccount), entries, rejected, total), nil
}

func sortedKeys[V any](m map[string]V) []string {
	return slices.Sorted(maps.Keys(m))
}

func kindOf(item map[string]ddbtypes.AttributeValue) string {
	if k, ok := item["kind"].(*ddbtypes.AttributeValueMemberS); ok {
		return k.Value
	}
	return ""
}

func (r *run) tagProblems(items []map[string]ddbtypes.AttributeValue) ([]string, string) {
	var p []string
	stored := map[string]int{}    // tag → counter
	carrying := map[string]int{}  // tag → notes whose stored tags hold it
	sent := map[string][]string{} // note id → tags of what the workload sent
	for _, q := range r.reqs {
		if q.note != nil && q.note.ID != "" {
			sent[q.note.ID] = notes.Tags(q.note.Title, q.note.Content)
		}
	}
	nNotes := 0
	for _, item := range items {
		switch kindOf(item) {
		case "tagCount":
			var c struct {
				Tag   string `dynamodbav:"tag"`
				Count int    `dynamodbav:"count"`
			}
			_ = attributevalue.UnmarshalMap(item, &c)
			stored[c.Tag] = c.Count
		case "note":
			var n notes.Note
			_ = attributevalue.UnmarshalMap(item, &n)
			nNotes++
			want, ok := sent[n.ID]
			if !ok {
				p = append(p, "note "+n.ID+" was not created by the workload")
			} else if !slices.Equal(n.Tags, want) && (len(n.Tags) != 0 || len(want) != 0) {
				p = append(p, fmt.Sprintf("note %s is tagged %v, its text has %v", n.ID, n.Tags, want))
			}
			for _, t := range n.Tags {
				carrying[t]++
			}
		}
	}
	if nNotes != len(sent) {
		p = append(p, fmt.Sprintf("%d notes in the table, the workload created %d", nNotes, len(sent)))
	}
	for _, t := range sortedKeys((unionKeys(stored, carrying))) {
		if stored[t] != carrying[t] {
			p = append(p, fmt.Sprintf("tag %s counts %d, %d notes carry it", t, stored[t], carrying[t]))
		}
	}
	return p, fmt.Sprintf("%d tags over %d notes, each count = notes carrying it = notes whose text has it", len(stored), nNotes)
}

func unionKeys(a, b map[string]int) map[string]int {
	out := map[string]int{}
	for k := range a {
		out[k] = 0
	}
	for k := range b {
		out[k] = 0
	}
	return out
}

// deadLetterProblems reads every dead-letter queue of a consumer: it must hold exactly the
// malformed messages injected into that consumer's queue.
func (r *run) deadLetterProblems(ctx context.Context, malformed map[string][]string) ([]string, string, error) {
	var p []string
	total := 0
	for _, c := range r.t.consumers {
		bodies, err := drainRead(ctx, r.sqs, c.DLQURL)
		if err != nil {
			return nil, "", err
		}
		total += len(bodies)
		found := map[string]bool{}
		for _, b := range bodies {
			hit := false
			for _, m := range malformed[c.DLQURL] {
				if strings.Contains(b, m) {
					found[m], hit = true, true
				}
			}
			if !hit {
				p = append(p, fmt.Sprintf("%s holds a message that is not one injected: %.80s", r.t.queues[c.DLQURL], b))
			}
		}
		for _, m := range malformed[c.DLQURL] {
			if !found[m] {
				p = append(p, fmt.Sprintf("%s lacks %s", r.t.queues[c.DLQURL], m))
			}
		}
	}
	return p, fmt.Sprintf("%d injected, %d in dead-letter queues, nothing else dead-lettered", len(flatten(malformed)), total), nil
}

func flatten(m map[string][]string) []string {
	var out []string
	for _, v := range m {
		out = append(out, v...)
	}
	return out
}

// drainRead returns the bodies of every message of a queue, hiding each for a few seconds.
func drainRead(ctx context.Context, client *sqs.Client, url string) ([]string, error) {
	seen := map[string]string{}
	for {
		out, err := client.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: aws.String(url),
			MaxNumberOfMessages: 10, VisibilityTimeout: 5})
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", url, err)
		}
		fresh := 0
		for _, m := range out.Messages {
			if _, ok := seen[aws.ToString(m.MessageId)]; !ok {
				seen[aws.ToString(m.MessageId)] = aws.ToString(m.Body)
				fresh++
			}
		}
		if fresh == 0 {
			break
		}
	}
	bodies := make([]string, 0, len(seen))
	for _, b := range seen {
		bodies = append(bodies, b)
	}
	return bodies, nil
}

// stuckProblems checks that every queue but the consumers' dead-letter queues is empty.
func (r *run) stuckProblems(ctx context.Context) ([]string, string, error) {
	dlq := map[string]bool{}
	for _, c := range r.t.consumers {
		dlq[c.DLQURL] = true
	}
	var p []string
	n := 0
	for _, u := range sortedKeys((r.t.queues)) {
		if dlq[u] {
			continue
		}
		n++
		d, err := queueDepth(ctx, r.sqs, u)
		if err != nil {
			return nil, "", err
		}
		if d.total() > 0 {
			p = append(p, fmt.Sprintf("%s: %d visible, %d in flight, %d delayed", r.t.queues[u], d.visible, d.inFlight, d.delayed))
		}
	}
	return p, fmt.Sprintf("%d source and failure queues empty (visible, in flight, delayed)", n), nil
}

// webhookProblems checks the receiver's calls when a consumer posts to it; ok is false when
// there is nothing to check.
func (r *run) webhookProblems(rep *Report) ([]string, string, bool) {
	notifier := false
	for _, f := range r.cloud.Functions() {
		if f.Env["WEBHOOK_URL_PARAMETER"] != "" && r.cfg.Receiver != nil {
			notifier = true
		}
	}
	if !notifier {
		return nil, "", false
	}
	calls, keys := notifications(r.cfg.Receiver)
	var p []string
	created := 0
	for _, q := range r.reqs {
		if q.note == nil || q.note.ID == "" {
			continue
		}
		created++
		if n := len(keys[q.note.ID]); n != 1 {
			p = append(p, fmt.Sprintf("note %s: %d distinct keys", q.note.ID, n))
		}
	}
	if len(keys) != created {
		p = append(p, fmt.Sprintf("calls about %d notes, %d created", len(keys), created))
	}
	rep.Webhook = fmt.Sprintf("%d calls about %d notes", calls, len(keys))
	return p, fmt.Sprintf("%d notes, %d calls, one distinct key per note", created, calls), true
}
