package workload

import (
	"cmp"
	"fmt"
	"slices"
	"time"

	"github.com/onceflow/onceflow/internal/ledger"
	"github.com/onceflow/onceflow/pkg/operator"
)

// orderProblems checks that the ledger decided each account's movements (applied or rejected)
// in the order the API accepted them: each account was driven by one client, one movement
// after the other, so that order is defined. The ledger's order is that of its records'
// processedAt: a FIFO group is processed one message after another, each after the one before
// was committed.
func (r *run) orderProblems(recs map[string]operator.Record) ([]string, string) {
	name, byAccount, err := r.ledgerMoves()
	if err != nil {
		return []string{err.Error()}, ""
	}
	var p []string
	checked := 0
	for _, id := range sortedKeys(byAccount) {
		accepted := byAccount[id]
		slices.SortFunc(accepted, func(a, b *sentMove) int { return cmp.Compare(a.Accepted, b.Accepted) })
		decided := slices.Clone(accepted)
		at := map[string]time.Time{}
		for _, m := range decided {
			at[m.EventID], _ = time.Parse(time.RFC3339Nano, recs[operator.Key(name, m.EventID)].ProcessedAt)
		}
		slices.SortStableFunc(decided, func(a, b *sentMove) int { return at[a.EventID].Compare(at[b.EventID]) })
		for i := range accepted {
			if accepted[i] != decided[i] {
				p = append(p, fmt.Sprintf("%s: movement #%d accepted (%s %s) but #%d decided in its place (%s %s)",
					id, i+1, accepted[i].Type, accepted[i].EventID, i+1, decided[i].Type, decided[i].EventID))
				break
			}
		}
		checked += len(accepted)
	}
	return p, fmt.Sprintf("%d accounts, %d movements: each account's decided in the order accepted", len(byAccount), checked)
}

// ledgerMoves is the name of the one consumer of the ledger's events and the movements the
// API accepted, by account in the order they were sent.
func (r *run) ledgerMoves() (string, map[string][]*sentMove, error) {
	ledgers := r.t.consumersOf(ledger.Credited)
	if len(ledgers) != 1 {
		return "", nil, fmt.Errorf("want one consumer of %s, found %d", ledger.Credited, len(ledgers))
	}
	byAccount := map[string][]*sentMove{}
	for _, q := range r.reqs {
		if q.move != nil && q.move.EventID != "" {
			byAccount[q.move.Account] = append(byAccount[q.move.Account], q.move)
		}
	}
	return ledgers[0].Name, byAccount, nil
}
