package engine

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/onceflow/onceflow/pkg/internal/table"
)

// MaxTransactionItems is how many items one TransactWriteItems takes.
const MaxTransactionItems = MaxEffectWrites + 1

// transaction is the members packed into one TransactWriteItems.
type transaction struct {
	members []*member
	items   int
	size    int
	touched map[itemRef]bool
}

// fits reports whether m can join t: within DynamoDB's limits and touching no item t touches.
// A Put whose key the engine does not know (see Effect.build) is not compared: should two
// members write one item that way, DynamoDB refuses the transaction and commitPack commits its
// members one by one.
func (t *transaction) fits(m *member, refs []itemRef, size int) bool {
	if t.items+len(m.p.items) > MaxTransactionItems || t.size+size > MaxTransactionSize {
		return false
	}
	for _, r := range refs {
		if t.touched[r] {
			return false
		}
	}
	return true
}

func (t *transaction) add(m *member, refs []itemRef, size int) {
	t.members = append(t.members, m)
	t.items += len(m.p.items)
	t.size += size
	for _, r := range refs {
		t.touched[r] = true
	}
}

// footprint returns the items m's transaction names by key and its size.
func footprint(m *member) ([]itemRef, int) {
	var refs []itemRef
	size := 0
	for _, it := range m.p.items {
		ref, n, err := describe(it, nil)
		size += n
		if err == nil && ref.key != "" {
			refs = append(refs, ref)
		}
	}
	return append(refs, itemRef{table: tableOf(m.p.items[m.p.recordIndex]), key: canonicalKey(table.ItemKey(m.p.rec.Key))}), size
}

func tableOf(w types.TransactWriteItem) string { return *w.Put.TableName }

// plan packs members, in order, into transactions: each joins the first that it fits.
func plan(members []*member) []*transaction {
	var txs []*transaction
	for _, m := range members {
		refs, size := footprint(m)
		placed := false
		for _, t := range txs {
			if t.fits(m, refs, size) {
				t.add(m, refs, size)
				placed = true
				break
			}
		}
		if !placed {
			t := &transaction{touched: map[itemRef]bool{}}
			t.add(m, refs, size)
			txs = append(txs, t)
		}
	}
	return txs
}

// commitAll commits the members in as few transactions as fit, concurrently, and settles
// every member.
func (c *Consumer) commitAll(ctx context.Context, members []*member) {
	var wg sync.WaitGroup
	for _, t := range plan(members) {
		wg.Go(func() { c.commitPack(ctx, t.members) })
	}
	wg.Wait()
}

// commitPack commits members in one TransactWriteItems, retrying transient failures within
// the deadline as commit does. A cancelled pack is resolved from its cancellation reasons:
// a member whose own items failed is settled as it would be alone (a duplicate, a conflict,
// a rejection, an invalid effect), and the others are committed again without it. A conflict
// or throttle anywhere retries the whole pack; when the reasons name the members whose items
// it hit, only those are retried, and the others are committed again at once without them,
// as they would be alone. A request DynamoDB refuses as a whole, or IAM denies, commits each
// member alone. A single member takes the one-message path.
func (c *Consumer) commitPack(ctx context.Context, members []*member) {
	var apart sync.WaitGroup
	defer apart.Wait()
	for attempt := 1; ; attempt++ {
		if len(members) == 1 {
			m := members[0]
			m.res, m.err = c.commit(ctx, m.p)
			close(m.done)
			return
		}
		err := c.send(ctx, members)
		switch classifyPack(err, members) {
		case permanent, refusedAccess: // each alone: IAM may refuse one member's items and not another's
			c.commitAlone(ctx, members)
			return
		case committed:
			again := c.resolve(ctx, members, err)
			if len(again) == 0 {
				return
			}
			if len(again) < len(members) {
				members = again
				continue // the rest, without the settled members, at once
			}
		case transient:
			if hit, rest := blame(err, members); len(hit) > 0 && len(rest) > 0 {
				apart.Go(func() { c.commitPack(ctx, rest) })
				members = hit
			}
		}
		if !c.cfg.Retry.wait(ctx, attempt) {
			for _, m := range members {
				m.res.Outcome, m.err = Failed, fmt.Errorf("commit %s after %d attempts: %w", m.p.rec.Key, attempt, err)
				close(m.done)
			}
			return
		}
	}
}

// classifyPack decides what a pack's answer means as a whole: committed when the members can
// be settled one by one (it committed, or was cancelled with reasons), transient when the
// whole pack should be retried (a conflict or throttle anywhere, since a condition read then
// may be stale), permanent when DynamoDB refused the request as such.
func classifyPack(err error, members []*member) verdictKind {
	var tce *types.TransactionCanceledException
	if err == nil {
		return committed
	}
	if !errors.As(err, &tce) {
		return classify(err, -1, -1).kind
	}
	total := 0
	for _, m := range members {
		total += len(m.p.items)
	}
	if len(tce.CancellationReasons) != total {
		return transient
	}
	for _, r := range tce.CancellationReasons {
		if transientCodes[aws.ToString(r.Code)] {
			return transient
		}
	}
	return committed
}

// blame splits the members of a pack cancelled for a conflict or throttle into those whose own
// items the reasons name as throttled or in conflict, and the rest; both nil when the reasons
// do not say.
func blame(err error, members []*member) (hit, rest []*member) {
	var tce *types.TransactionCanceledException
	if !errors.As(err, &tce) || classifyPack(err, members) != transient {
		return nil, nil
	}
	reasons, off := tce.CancellationReasons, 0
	for _, m := range members {
		n := len(m.p.items)
		if off+n > len(reasons) {
			return nil, nil
		}
		if slices.ContainsFunc(reasons[off:off+n], func(r types.CancellationReason) bool {
			return transientCodes[aws.ToString(r.Code)]
		}) {
			hit = append(hit, m)
		} else {
			rest = append(rest, m)
		}
		off += n
	}
	if off != len(reasons) {
		return nil, nil
	}
	return hit, rest
}

// send makes one TransactWriteItems of the members' items and adds its time to each.
func (c *Consumer) send(ctx context.Context, members []*member) error {
	var items []types.TransactWriteItem
	for _, m := range members {
		items = append(items, m.p.items...)
	}
	start := time.Now()
	callCtx, cancel := c.cfg.Retry.bound(ctx)
	_, err := c.db.TransactWriteItems(callCtx, &dynamodb.TransactWriteItemsInput{TransactItems: items}, c.cfg.Retry.single)
	cancel()
	took := time.Since(start)
	for _, m := range members {
		m.res = m.p.res
		m.res.Commit += took
		m.p.res.Commit = m.res.Commit
	}
	return err
}

// resolve settles each member of a committed pack, or of one cancelled for its members' own
// conditions, and returns those to commit again: members whose items DynamoDB found no fault
// with. Reasons are in item order, so each member reads its own slice of them.
func (c *Consumer) resolve(ctx context.Context, members []*member, err error) []*member {
	var reasons []types.CancellationReason
	var tce *types.TransactionCanceledException
	if errors.As(err, &tce) {
		reasons = tce.CancellationReasons
	}
	var again []*member
	off := 0
	for _, m := range members {
		n := len(m.p.items)
		v := verdict{kind: committed}
		if err != nil {
			v = classifyReasons(reasons[off:off+n], m.p.recordIndex, m.p.heldIndex)
		}
		off += n
		if v.kind == transient { // its items were fine: another member's failed
			again = append(again, m)
			continue
		}
		var done bool
		m.res, done, m.err = c.settle(ctx, m.p, v, err)
		if !done {
			again = append(again, m)
			continue
		}
		close(m.done)
	}
	return again
}

// commitAlone commits each member in its own transaction, concurrently.
func (c *Consumer) commitAlone(ctx context.Context, members []*member) {
	var wg sync.WaitGroup
	for _, m := range members {
		wg.Go(func() { c.commitPack(ctx, []*member{m}) })
	}
	wg.Wait()
}
