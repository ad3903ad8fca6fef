package workload

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"sort"
	"sync"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	ddbtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/onceflow/onceflow/internal/ledger"
	"github.com/onceflow/onceflow/pkg/operator"
)

// movementStatus is GET /accounts/{id}/movements/{reference}.
type movementStatus struct {
	EventID string `json:"eventId"`
	Status  string `json:"status"`
	Reason  string `json:"reason"`
	At      string `json:"at"`
}

// errNoMovement is the API's 404 for a movement it has no item of.
var errNoMovement = errors.New("no such movement")

// getMovement reads the status of a movement the workload sent, where a 202 points to.
func (r *run) getMovement(ctx context.Context, m *sentMove) (movementStatus, error) {
	var st movementStatus
	u := r.cloud.Endpoints().APIURL + "/accounts/" + url.PathEscape(m.Account) + "/movements/" + url.PathEscape(m.Reference)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return st, err
	}
	resp, err := r.ownerClient(m.Account).Do(req) // the owner may read its movements
	if err != nil {
		return st, fmt.Errorf("get movement %s: %w", m.Reference, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode == http.StatusNotFound {
		return st, fmt.Errorf("get movement %s of %s: %w", m.Reference, m.Account, errNoMovement)
	}
	if resp.StatusCode != http.StatusOK {
		return st, fmt.Errorf("get movement %s of %s: %d %s", m.Reference, m.Account, resp.StatusCode, b)
	}
	return st, json.Unmarshal(b, &st)
}

// resolveUnanswered asks the API, once the traffic is over, for each movement none of whose
// attempts was answered 2xx: an attempt may have been recorded and its answer lost (a 5xx after
// a commit whose response the network dropped), and the ledger then applies it. One the API has
// is an accepted movement like any other, at the place in its account's order it was sent; one
// it answers 404 for was never recorded. Anything else fails the run: its fate is unknown.
func resolveUnanswered(ctx context.Context, reqs []request, get func(context.Context, *sentMove) (movementStatus, bool, error)) (resolved int, err error) {
	for _, q := range reqs {
		m := q.move
		if m == nil || !m.Unanswered || m.EventID != "" {
			continue
		}
		st, ok, err := get(ctx, m)
		if err != nil {
			return resolved, fmt.Errorf("unanswered movement %s of %s: %w", m.Reference, m.Account, err)
		}
		if ok {
			m.EventID = st.EventID
			resolved++
		}
	}
	return resolved, nil
}

// findMovement is getMovement, a 404 answered as not found.
func (r *run) findMovement(ctx context.Context, m *sentMove) (movementStatus, bool, error) {
	st, err := r.getMovement(ctx, m)
	if errors.Is(err, errNoMovement) {
		return st, false, nil
	}
	return st, err == nil, err
}

// maxPolled is how many movements movementProblems polls through the API at most: a run of
// 100,000 events would otherwise spend longer polling than running. Every movement's item,
// which the API answers from, is checked in the table.
const maxPolled = 2000

// movementProblems checks that every accepted movement's status is what the ledger's record
// says, applied, or rejected with the record's reason: on its movement item in the table (items,
// the app table's scan) for every movement, and as a client polling it sees it for up to
// maxPolled of them, evenly spread over the run.
func (r *run) movementProblems(ctx context.Context, recs map[string]operator.Record, items []map[string]ddbtypes.AttributeValue) ([]string, string) {
	ledgers := r.t.consumersOf(ledger.Credited)
	if len(ledgers) != 1 {
		return []string{fmt.Sprintf("want one consumer of %s, found %d", ledger.Credited, len(ledgers))}, ""
	}
	var moves []*sentMove
	for _, q := range r.reqs {
		if q.move != nil && q.move.EventID != "" {
			moves = append(moves, q.move)
		}
	}
	polled := moves
	if len(moves) > maxPolled {
		polled = make([]*sentMove, 0, maxPolled)
		for i := range maxPolled {
			polled = append(polled, moves[i*len(moves)/maxPolled])
		}
	}
	stored := map[string]ledger.Movement{}
	for _, it := range items {
		if kindOf(it) == "movement" {
			var m ledger.Movement
			if err := attributevalue.UnmarshalMap(it, &m); err != nil {
				return []string{fmt.Sprintf("movement item: %v", err)}, ""
			}
			stored[m.EventID] = m
		}
	}
	var (
		mu                sync.Mutex
		p                 []string
		applied, rejected int
		wg                sync.WaitGroup
		work              = make(chan *sentMove)
	)
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for m := range work {
				st, err := r.getMovement(ctx, m)
				rec := recs[ledgers[0].Name+"#"+m.EventID]
				mu.Lock()
				switch {
				case err != nil:
					p = append(p, err.Error())
				case st.EventID != m.EventID || st.Status != rec.Outcome || st.Reason != rec.Reason || st.At == "":
					p = append(p, fmt.Sprintf("%s: status %+v, the ledger recorded %s %q", m.Reference, st, rec.Outcome, rec.Reason))
				case st.Status == ledger.StatusRejected:
					rejected++
				default:
					applied++
				}
				mu.Unlock()
			}
		}()
	}
	for _, m := range moves {
		st, rec := stored[m.EventID], recs[ledgers[0].Name+"#"+m.EventID]
		if st.Status != rec.Outcome || st.Reason != rec.Reason || st.At == "" {
			p = append(p, fmt.Sprintf("%s: movement item %s %q at %q, the ledger recorded %s %q", m.Reference, st.Status, st.Reason, st.At, rec.Outcome, rec.Reason))
		}
	}
	for _, m := range polled {
		work <- m
	}
	close(work)
	wg.Wait()
	sort.Strings(p)
	return p, fmt.Sprintf("%d movement items say what the ledger recorded; %d polled at their status: %d applied, %d rejected with the ledger's reason",
		len(moves), len(polled), applied, rejected)
}
