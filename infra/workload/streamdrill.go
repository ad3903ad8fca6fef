package workload

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/onceflow/onceflow/internal/ledger"
	"github.com/onceflow/onceflow/pkg/operator"
)

// streamDrillStats is what the stream consumer's recovery drill did: the runbook's path for a
// held stream key (docs/runbook.md) followed with the operator's CLI while the ledger's
// traffic went on changing the account, and so the stream.
type streamDrillStats struct {
	consumer, account, key string
	eventID                string // the stream record of the bad change, discarded
	heldBehind             int    // the account's later changes held behind it when the drill found it
	redriven, rounds       int    // letters moved to the replay queue, and the redrives that moved them
	commands               int
	err                    error
}

// migrationWhy is what the drill's bad change of an account item says it is: a migration that
// rewrote the item without the lastEvent the ledger sets, which the statement consumer refuses.
const migrationWhy = "names no movement"

// streamDrill runs the recovery drill of the stream consumer (the statement consumer) once a
// quarter of the requests are answered: it plays a migration that rewrites an account item
// without its lastEvent (a change the consumer dead-letters, holding the account's key), waits
// until a later change of the account is held behind it, then follows the runbook with the
// CLI: dlq list, dlq discard of the bad change, dlq redrive of the rest (to the consumer's
// replay queue, which the stack's ReplayQueues output names) until the key is free and its
// letters are gone, while the traffic goes on.
func (r *run) streamDrill(ctx context.Context, traffic <-chan struct{}) streamDrillStats {
	st := streamDrillStats{consumer: r.t.streams[0].Name}
	st.err = r.runStreamDrill(ctx, traffic, &st)
	return st
}

func (r *run) runStreamDrill(ctx context.Context, traffic <-chan struct{}, st *streamDrillStats) error {
	sc := r.t.streams[0]
	for r.tr.done.Load() < int64(len(r.reqs)/4) {
		if err := pause(ctx, 200*time.Millisecond); err != nil {
			return err
		}
	}
	if err := r.migrate(ctx, st); err != nil {
		return err
	}
	admin := operator.New(r.ddb, r.t.idemTable)
	deadline := time.Now().Add(r.cfg.DrainTimeout)
	for {
		h, ok, err := admin.Hold(ctx, sc.Name, st.key)
		if err != nil {
			return err
		}
		ended := false
		select {
		case <-traffic:
			ended = true
		default:
		}
		if ok && (len(h.Held) > 1 || ended) { // a later change held behind it, however long it takes to come (see tailsReady)
			st.eventID, st.heldBehind = h.BlockerEventID, len(h.Held)-1
			break
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("stream drill: %s of %s not held behind the migration's change after %s", st.key, sc.Name, r.cfg.DrainTimeout)
		}
		if err := pause(ctx, 500*time.Millisecond); err != nil {
			return err
		}
	}
	letter, err := r.findStreamLetter(ctx, st, sc.DLQURL)
	if err != nil {
		return err
	}
	if _, err := r.streamCLI(ctx, st, "dlq", "discard", "--queue", sc.DLQURL, "--consumer", sc.Name, "--yes", "--by", "workload",
		"--why", "drill: a migration rewrote the account item without its lastEvent", letter); err != nil {
		return err
	}
	for {
		var ds drillStats
		out, moved, unseen, err := r.cliRedrive(ctx, &ds, sc.DLQURL)
		st.commands += ds.commands
		if err != nil {
			return err
		}
		if !strings.Contains(out, "to its replay queue "+sc.ReplayURL) {
			return fmt.Errorf("stream drill: dlq redrive did not send to the replay queue %s: %s", sc.ReplayURL, out)
		}
		st.rounds++
		st.redriven += moved
		if err := pause(ctx, 2*time.Second); err != nil { // let the replay queue's consumer take them
			return err
		}
		_, held, err := admin.Hold(ctx, sc.Name, st.key)
		if err != nil {
			return err
		}
		list, err := r.streamCLI(ctx, st, "dlq", "list", "--queue", sc.DLQURL, "--limit", "0")
		if err != nil {
			return err
		}
		if !held && len(letterLine.FindAllStringSubmatch(list, -1)) == 0 && unseen == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("stream drill: %s not recovered after %d redrives in %s (held %v): %s", st.key, st.rounds, r.cfg.DrainTimeout, held, list)
		}
	}
}

// migrate picks the account of the last movement requested whose item the ledger has written,
// so that its later movements change it under the drill, and rewrites its item as a migration
// would: without lastEvent. It waits for the accounts the ledger's drill poisoned and leaves
// them alone, so that each drill has its own.
func (r *run) migrate(ctx context.Context, st *streamDrillStats) error {
	var ledgerDrill map[string]bool
	select {
	case ledgerDrill = <-r.poisoned:
	case <-ctx.Done():
		return ctx.Err()
	}
	for i := len(r.reqs) - 1; i >= 0; i-- {
		mv := r.reqs[i].move
		if mv == nil || ledgerDrill[mv.Account] {
			continue
		}
		exists := expression.Name("pk").AttributeExists()
		upd := expression.Remove(expression.Name("lastEvent")).Set(expression.Name("migratedBy"), expression.Value("workload drill"))
		expr, err := expression.NewBuilder().WithCondition(exists).WithUpdate(upd).Build()
		if err != nil {
			return err
		}
		_, err = r.ddb.UpdateItem(ctx, &dynamodb.UpdateItemInput{TableName: aws.String(r.t.appTable), Key: ledger.AccountKey(mv.Account),
			ConditionExpression: expr.Condition(), UpdateExpression: expr.Update(),
			ExpressionAttributeNames: expr.Names(), ExpressionAttributeValues: expr.Values()})
		if isConditionFailed(err) {
			continue // not credited yet
		}
		if err != nil {
			return fmt.Errorf("stream drill: migrate %s: %w", mv.Account, err)
		}
		st.account, st.key = mv.Account, "pk="+ledger.PK(mv.Account)+"|sk=ACCOUNT"
		return nil
	}
	return fmt.Errorf("stream drill: no account item to migrate")
}

// findStreamLetter lists the stream consumer's dead-letter queue with the CLI until the bad
// change's letter is in view, and returns its message id.
func (r *run) findStreamLetter(ctx context.Context, st *streamDrillStats, dlq string) (string, error) {
	deadline := time.Now().Add(time.Minute)
	for {
		out, err := r.streamCLI(ctx, st, "dlq", "list", "--queue", dlq, "--limit", "0")
		if err != nil {
			return "", err
		}
		for _, m := range letterLine.FindAllStringSubmatch(out, -1) {
			if m[2] == st.eventID && m[3] == st.key && strings.Contains(m[4], migrationWhy) {
				return m[1], nil
			}
		}
		if time.Now().After(deadline) {
			return "", fmt.Errorf("stream drill: the letter of %s (%s) not in view after a minute of dlq list:\n%s", st.eventID, st.key, out)
		}
		if err := pause(ctx, time.Second); err != nil {
			return "", err
		}
	}
}

func (r *run) streamCLI(ctx context.Context, st *streamDrillStats, group, cmd string, args ...string) (string, error) {
	var ds drillStats
	out, err := r.cli(ctx, &ds, group, cmd, args...)
	st.commands += ds.commands
	return out, err
}

// streamDrillProblems checks what the stream drill left: it finished, a later change was held
// behind the bad one (else it proved nothing under traffic), the key is free.
func (r *run) streamDrillProblems(ctx context.Context) ([]string, string) {
	st := r.streamDrilled
	var p []string
	if st.err != nil {
		p = append(p, st.err.Error())
	}
	if st.heldBehind == 0 && st.err == nil {
		p = append(p, "no later change was held behind the bad one: the recovery was not tried while the stream went on")
	}
	admin := operator.New(r.ddb, r.t.idemTable)
	if h, ok, err := admin.Hold(ctx, st.consumer, st.key); err != nil || ok {
		p = append(p, fmt.Sprintf("%s of %s is still held (%d held, %v)", st.key, st.consumer, len(h.Held), err))
	}
	return p, fmt.Sprintf("%s of %s held behind a migration's change with %d later changes behind it; the change discarded, %d letters redriven to the replay queue in %d redrives (%d CLI commands), applied in order while the stream went on",
		st.key, st.consumer, st.heldBehind, st.redriven, st.rounds, st.commands)
}

func isConditionFailed(err error) bool {
	var ccf *types.ConditionalCheckFailedException
	return errors.As(err, &ccf)
}
