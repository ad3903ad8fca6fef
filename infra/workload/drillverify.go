package workload

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	ddbtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/onceflow/onceflow/pkg/idempotency"
	"github.com/onceflow/onceflow/pkg/operator"
)

// discardedKeys are the ledger's idempotency keys of the events the drill discarded: records
// the API's traffic does not explain, which drillProblems checks.
func (r *run) discardedKeys() map[string]bool {
	out := map[string]bool{}
	name, _, err := r.ledgerMoves()
	if err != nil {
		return out
	}
	for _, id := range r.drilled.discarded {
		out[operator.Key(name, id)] = true
	}
	return out
}

// drillProblems checks what the recovery drill left: it finished; a live movement was held
// behind a bad message (or the drill proved nothing under traffic); every discarded letter is
// findable with `onceflow record get` (recorded as discarded with its body; for a conflict,
// beside the applied event's record, which stays); no poisoned account is held; every legitimate movement of a
// poisoned account was applied or rejected.
func (r *run) drillProblems(ctx context.Context, recs map[string]operator.Record) ([]string, string) {
	st := r.drilled
	var p []string
	if st.err != nil {
		p = append(p, st.err.Error())
	}
	if st.heldBehind == 0 && st.err == nil {
		p = append(p, "no live movement was held behind a bad message: the recovery was not tried under traffic")
	}
	name, byAccount, err := r.ledgerMoves()
	if err != nil {
		return append(p, err.Error()), ""
	}
	admin := operator.New(r.ddb, r.t.idemTable)
	moves := 0
	for i, ps := range st.poisons {
		if i >= len(st.discarded) {
			p = append(p, fmt.Sprintf("%s: its bad message (%s) was not discarded", ps.account, ps.kind))
			continue
		}
		out, err := r.cli(ctx, &st, "record", "get", "--consumer", name, ps.eventID)
		switch {
		case err != nil:
			p = append(p, err.Error())
		case !strings.Contains(out, `"outcome": "discarded"`) || !strings.Contains(out, `"payload": "{`):
			p = append(p, fmt.Sprintf("record get %s (%s) shows no discarded letter with its body: %.300s", ps.eventID, ps.kind, out))
		case ps.kind == poisonConflict && !strings.Contains(out, `"outcome": "applied"`):
			p = append(p, fmt.Sprintf("record get %s (a conflict) does not show the applied event's record: %.300s", ps.eventID, out))
		}
		if h, ok, err := admin.Hold(ctx, name, ps.account); err != nil || ok {
			p = append(p, fmt.Sprintf("%s is still held (%d held, %v)", ps.account, len(h.Held), err))
		}
		for _, m := range byAccount[ps.account] {
			moves++
			if rec := recs[operator.Key(name, m.EventID)]; rec.Outcome != string(idempotency.Applied) && rec.Outcome != string(idempotency.Rejected) {
				p = append(p, fmt.Sprintf("%s: movement %s of a poisoned account not decided (%q)", ps.account, m.EventID, rec.Outcome))
			}
		}
	}
	return p, fmt.Sprintf("%d accounts poisoned, %d live movements held behind, %d bad letters discarded (record get finds each), %d skipped, %d letters redriven in %d redrives; all %d movements of the poisoned accounts decided, none held",
		len(st.poisons), st.heldBehind, len(st.discarded), st.skipped, st.redriven, st.rounds, moves)
}

// holdProblems checks that no group of any consumer is held at the end but the groups of the
// malformed messages injected (each held behind its own letter, which stays dead-lettered).
func holdProblems(items []map[string]ddbtypes.AttributeValue, malformed map[string][]string) ([]string, string) {
	injected := flatten(malformed)
	var p []string
	for _, it := range items {
		pk, _ := it["pk"].(*ddbtypes.AttributeValueMemberS)
		if pk == nil || !strings.HasPrefix(pk.Value, "#hold#") {
			continue
		}
		var h operator.Hold
		if err := attributevalue.UnmarshalMap(it, &h); err != nil {
			p = append(p, fmt.Sprintf("%s: %v", pk.Value, err))
			continue
		}
		if len(h.Held) == 0 || slices.Contains(injected, h.Group) {
			continue
		}
		p = append(p, fmt.Sprintf("%s of %s held behind %s (%d held)", h.Group, h.Consumer, h.BlockerEventID, len(h.Held)))
	}
	return p, fmt.Sprintf("no group held but the %d injected malformed messages' own", len(injected))
}
