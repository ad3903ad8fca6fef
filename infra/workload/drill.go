package workload

import (
	"context"
	"fmt"
	"os/exec"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/onceflow/onceflow/internal/ledger"
	"github.com/onceflow/onceflow/pkg/idempotency"
	"github.com/onceflow/onceflow/pkg/operator"
)

// drillStats is what the recovery drill did: the runbook followed with the operator's CLI on
// the accounts it poisoned, while the workload's traffic went on.
type drillStats struct {
	poisons    []poison
	discarded  []string // event ids of the letters discarded, in order
	skipped    int      // blockers skipped (hold skip)
	requeued   int      // skipped letters redriven after their tail and dead-lettered again, unheld
	returned   int      // discarded events the producer sent again, answered from their records
	heldBehind int      // live movements held behind the poisons when the drill found them
	redriven   int      // letters its redrives moved
	rounds     int      // redrives it ran
	commands   int      // CLI commands it ran
	err        error    // why it could not finish
}

// drill poisons cfg.Poison accounts once a quarter of the requests are answered, then follows
// docs/runbook.md with the operator's CLI (cfg.CLI, on the local cloud): it finds the letters
// (dlq list), lets a group go on past its blocker where the runbook allows it (hold skip, the
// letter moved behind the held tail), discards each other bad letter (dlq discard) and
// redrives the queue (dlq redrive) until none of the poisoned accounts is held and their
// letters are gone; a skipped letter comes back after its tail, dead-lettered again unheld,
// and is discarded then. Last, the producer sends each discarded malformed event again: the
// ledger answers it from its record, no letter, no hold. traffic is closed when the requests
// end.
func (r *run) drill(ctx context.Context, traffic <-chan struct{}) drillStats {
	var st drillStats
	defer r.sharePoisoned(&st) // if it stopped before poisoning
	st.err = r.runDrill(ctx, traffic, &st)
	return st
}

// sharePoisoned hands the stream drill the accounts this drill poisoned, once.
func (r *run) sharePoisoned(st *drillStats) {
	accounts := map[string]bool{}
	for _, p := range st.poisons {
		accounts[p.account] = true
	}
	select {
	case r.poisoned <- accounts:
	default:
	}
}

func (r *run) runDrill(ctx context.Context, traffic <-chan struct{}, st *drillStats) error {
	led := r.t.consumersOf(ledger.Credited)
	if len(led) != 1 {
		return fmt.Errorf("drill: want one consumer of %s, found %d", ledger.Credited, len(led))
	}
	dlq := r.t.queues[led[0].DLQURL]
	for r.tr.done.Load() < int64(len(r.reqs)/4) {
		if err := pause(ctx, 200*time.Millisecond); err != nil {
			return err
		}
	}
	err := r.poison(ctx, led[0], st)
	r.sharePoisoned(st)
	if err != nil {
		return err
	}
	admin := operator.New(r.ddb, r.t.idemTable)
	if err := r.awaitHeld(ctx, admin, led[0].Name, traffic, st); err != nil {
		return err
	}
	letters, err := r.findLetters(ctx, dlq, st.poisons, st)
	if err != nil {
		return err
	}
	for _, p := range st.poisons {
		if p.skip { // its letter moves behind the held tail: the redrive sends the tail first
			if _, err := r.cliSkip(ctx, st, "--consumer", led[0].Name, "--queue", dlq, "--yes", "--by", "workload",
				"--why", "drill: the group goes on past a producer's bad message, decided later", p.account); err != nil {
				return err
			}
			st.skipped++
			continue
		}
		if err := r.discard(ctx, st, led[0].Name, dlq, p, letters[p.account]); err != nil {
			return err
		}
	}
	if err := r.redriveUntilRecovered(ctx, admin, led[0].Name, dlq, st); err != nil {
		return err
	}
	return r.sendDiscardedAgain(ctx, admin, led[0], dlq, st)
}

// discard discards p's letter (message id letter) with the CLI.
func (r *run) discard(ctx context.Context, st *drillStats, consumer, dlq string, p poison, letter string) error {
	if _, err := r.cli(ctx, st, "dlq", "discard", "--queue", dlq, "--consumer", consumer, "--yes", "--by", "workload",
		"--why", "drill: a producer's bad message ("+p.kind+")", letter); err != nil {
		return err
	}
	st.discarded = append(st.discarded, p.eventID)
	return nil
}

// sendDiscardedAgain plays the producer sending each discarded malformed event again (a relay's
// retry, `outbox republish`, a client's retry after SQS's five-minute window): the ledger must
// answer it from its record, a duplicate of the discarded event, whatever its handler says of
// it, with no letter and no hold. It waits for the ledger's log line of each answer.
func (r *run) sendDiscardedAgain(ctx context.Context, admin *operator.Admin, led consumer, dlq string, st *drillStats) error {
	for _, p := range st.poisons {
		if p.kind != poisonMalformed {
			continue
		}
		offsets := logOffsets(r.t.logs, led.Function)
		if err := r.sendBody(ctx, led, p.account, p.body, "poison-again-"+p.eventID); err != nil {
			return fmt.Errorf("drill: send %s again: %w", p.eventID, err)
		}
		deadline := time.Now().Add(r.cfg.DrainTimeout)
		for !answeredAs(r.t.logs, led.Function, offsets, p.eventID, idempotency.Discarded) {
			if time.Now().After(deadline) {
				return fmt.Errorf("drill: %s, discarded and sent again, not answered from its record within %s", p.eventID, r.cfg.DrainTimeout)
			}
			if err := pause(ctx, 500*time.Millisecond); err != nil {
				return err
			}
		}
		st.returned++
	}
	left, _, err := r.drillLeft(ctx, admin, led.Name, dlq, st)
	if err == nil && left != "" {
		err = fmt.Errorf("drill: after the discarded events were sent again: %s", left)
	}
	return err
}

// poison picks the first cfg.Poison accounts (by id) the ledger has applied an event of, and
// sends each its bad message.
func (r *run) poison(ctx context.Context, led consumer, st *drillStats) error {
	for i := 0; i < r.cfg.Accounts && len(st.poisons) < r.cfg.Poison; i++ {
		kind, skip := poisonKind(len(st.poisons))
		p, ok, err := r.sendPoison(ctx, led, accountID(i), kind)
		if err != nil {
			return err
		}
		if ok {
			p.skip = skip
			st.poisons = append(st.poisons, p)
		}
	}
	if len(st.poisons) < r.cfg.Poison {
		return fmt.Errorf("drill: %d accounts poisoned, want %d (too few with an applied event)", len(st.poisons), r.cfg.Poison)
	}
	return nil
}

// awaitHeld waits until every poisoned account is held behind its bad message, then until a
// live movement is held behind it too (or the traffic ends, or 20 s pass), and counts them.
func (r *run) awaitHeld(ctx context.Context, admin *operator.Admin, consumer string, traffic <-chan struct{}, st *drillStats) error {
	deadline := time.Now().Add(r.cfg.DrainTimeout)
	behind := time.Now().Add(20 * time.Second)
	for {
		held, tails := 0, 0
		for _, p := range st.poisons {
			h, ok, err := admin.Hold(ctx, consumer, p.account)
			if err != nil {
				return err
			}
			if ok && h.BlockerEventID == p.eventID {
				held++
				tails += min(len(h.Held)-1, 1)
			}
		}
		ended := false
		select {
		case <-traffic:
			ended = true
		default:
		}
		if tailsReady(held, len(st.poisons), tails, ended, time.Now().After(behind)) {
			return r.countHeldBehind(ctx, admin, consumer, st)
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("drill: %d of %d poisoned accounts held behind their bad message after %s", held, len(st.poisons), r.cfg.DrainTimeout)
		}
		if err := pause(ctx, 500*time.Millisecond); err != nil {
			return err
		}
	}
}

// tailsReady says whether the drill goes on: every poisoned account is held behind its bad
// message, and each has a movement held behind it, or some has and the wait for the others is
// up, or the traffic ended. While the traffic goes on it waits for one at least, however long
// an account's next movement takes (a minute at 1,000 accounts): the drill is of a recovery
// under traffic.
func tailsReady(held, want, tails int, ended, waitedEnough bool) bool {
	return held == want && (tails == held || ended || tails > 0 && waitedEnough)
}

func (r *run) countHeldBehind(ctx context.Context, admin *operator.Admin, consumer string, st *drillStats) error {
	st.heldBehind = 0
	for _, p := range st.poisons {
		h, _, err := admin.Hold(ctx, consumer, p.account)
		if err != nil {
			return err
		}
		st.heldBehind += max(len(h.Held)-1, 0)
	}
	return nil
}

// letterLine is a letter in `onceflow dlq list`: its message id, event id, group and reason.
var letterLine = regexp.MustCompile(`(?m)^(\S+)  event (\S+)  type \S+  group (\S+)  at [^\n]*\n    reason: ([^\n]*)`)

// skippedReason is what the reason of a skipped message's letter says once it is dead-lettered
// again (idempotency.SkippedError).
const skippedReason = "holds the group no more"

// findLetters lists the dead-letter queue with the CLI until every poison's letter is in view
// (the head of its group), and returns their message ids by account.
func (r *run) findLetters(ctx context.Context, dlq string, poisons []poison, st *drillStats) (map[string]string, error) {
	deadline := time.Now().Add(time.Minute)
	for {
		out, err := r.cli(ctx, st, "dlq", "list", "--queue", dlq, "--limit", "0")
		if err != nil {
			return nil, err
		}
		found := map[string]string{}
		for _, m := range letterLine.FindAllStringSubmatch(out, -1) {
			for _, p := range poisons {
				if m[2] == p.eventID && m[3] == p.account {
					found[p.account] = m[1]
				}
			}
		}
		if len(found) == len(poisons) {
			return found, nil
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("drill: %d of %d bad letters in view after a minute of dlq list", len(found), len(poisons))
		}
		if err := pause(ctx, time.Second); err != nil {
			return nil, err
		}
	}
}

// redriveSummary is the last line of `onceflow dlq redrive`.
var redriveSummary = regexp.MustCompile(`moved (\d+), would move \d+, skipped \d+, behind \d+, unseen (\d+)`)

// cliRedrive runs `onceflow dlq redrive --queue dlq` and returns its output and what its
// summary says it moved and left out of view.
func (r *run) cliRedrive(ctx context.Context, st *drillStats, dlq string) (out string, moved, unseen int, err error) {
	if out, err = r.cli(ctx, st, "dlq", "redrive", "--queue", dlq); err != nil {
		return out, 0, 0, err
	}
	m := redriveSummary.FindStringSubmatch(out)
	if m == nil {
		return out, 0, 0, fmt.Errorf("drill: dlq redrive said no summary: %s", out)
	}
	moved, _ = strconv.Atoi(m[1])
	unseen, _ = strconv.Atoi(m[2])
	return out, moved, unseen, nil
}

// redriveUntilRecovered runs `onceflow dlq redrive` until no poisoned account is held and no
// letter of theirs is left. One redrive may not be enough: a live movement of a held account
// dead-lettered while the redrive ran comes after it, and letters behind their group's head
// are out of view until it has gone (unseen). A skipped poison comes back after its tail,
// dead-lettered again without holding its account: it is discarded then (decided later).
func (r *run) redriveUntilRecovered(ctx context.Context, admin *operator.Admin, consumer, dlq string, st *drillStats) error {
	deadline := time.Now().Add(r.cfg.DrainTimeout)
	for {
		_, moved, unseen, err := r.cliRedrive(ctx, st, dlq)
		if err != nil {
			return err
		}
		st.rounds++
		st.redriven += moved
		if err := pause(ctx, 2*time.Second); err != nil { // let the ledger take what was sent
			return err
		}
		left, back, err := r.drillLeft(ctx, admin, consumer, dlq, st)
		if err != nil {
			return err
		}
		again := false // a letter discarded this round: look once more, whatever the time
		for _, p := range st.poisons {
			if id, ok := back[p.account]; ok {
				if err := r.discard(ctx, st, consumer, dlq, p, id); err != nil {
					return err
				}
				st.requeued++
				again = true
			}
		}
		if again {
			continue
		}
		left, done := drillRecovered(left, unseen, st)
		if done {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("drill: not recovered after %d redrives in %s: %s", st.rounds, r.cfg.DrainTimeout, left)
		}
	}
}

// drillRecovered reports whether the redrives are done: nothing left (held, or a letter in
// view), every letter seen, and each skipped poison's letter back and discarded (until then
// it may be in the source queue, redriven, not yet taken by the ledger), with what is left
// when not.
func drillRecovered(left string, unseen int, st *drillStats) (string, bool) {
	var wait []string
	if left != "" {
		wait = append(wait, left)
	}
	if unseen > 0 {
		wait = append(wait, fmt.Sprintf("%d letters the redrive did not see", unseen))
	}
	for _, p := range st.poisons {
		if p.skip && !slices.Contains(st.discarded, p.eventID) {
			wait = append(wait, "the skipped letter of "+p.account+" not back yet")
		}
	}
	return strings.Join(wait, ", "), len(wait) == 0
}

// drillLeft says what of the poisoned accounts is not recovered yet, "" when nothing, and the
// letters of skipped poisons dead-lettered again (their reason says they hold their group no
// more) by account, while their account is not held.
func (r *run) drillLeft(ctx context.Context, admin *operator.Admin, consumer, dlq string, st *drillStats) (string, map[string]string, error) {
	var left []string
	held := map[string]bool{}
	for _, p := range st.poisons {
		h, ok, err := admin.Hold(ctx, consumer, p.account)
		if err != nil {
			return "", nil, err
		}
		if ok {
			held[p.account] = true
			left = append(left, fmt.Sprintf("%s held (%d)", p.account, len(h.Held)))
		}
	}
	out, err := r.cli(ctx, st, "dlq", "list", "--queue", dlq, "--limit", "0")
	if err != nil {
		return "", nil, err
	}
	back := map[string]string{}
	for _, m := range letterLine.FindAllStringSubmatch(out, -1) {
		for _, p := range st.poisons {
			switch {
			case m[3] != p.account:
			case p.skip && m[2] == p.eventID && strings.Contains(m[4], skippedReason) && !held[p.account]:
				back[p.account] = m[1]
			default:
				left = append(left, fmt.Sprintf("letter %s of %s in view", m[2], p.account))
			}
		}
	}
	return strings.Join(left, ", "), back, nil
}

// cli runs the operator's CLI on the local cloud and returns what it printed; a non-zero exit
// is an error with its output.
func (r *run) cli(ctx context.Context, st *drillStats, group, cmd string, args ...string) (string, error) {
	argv := append([]string{group, cmd, "--local", "--state", r.cloud.StateDir()}, args...)
	st.commands++
	out, err := exec.CommandContext(ctx, r.cfg.CLI, argv...).CombinedOutput()
	if err != nil {
		return string(out), fmt.Errorf("drill: onceflow %s: %w\n%s", strings.Join(argv, " "), err, out)
	}
	return string(out), nil
}

// cliSkip runs `hold skip`: under traffic a live message can join the hold between the CLI's
// look and its conditional write, which the CLI then refuses, nothing written, saying to look
// again; the drill does, as an operator would, a few times. Only that refusal, the CLI's last
// line, is run again: a skip that wrote and failed later (its letter not moved), or that printed
// the words elsewhere (a held message's reason), is not.
func (r *run) cliSkip(ctx context.Context, st *drillStats, args ...string) (string, error) {
	for look := 1; ; look++ {
		out, err := r.cli(ctx, st, "hold", "skip", args...)
		if err == nil || look == 10 || !refusedChanged(out) {
			return out, err
		}
		if err := pause(ctx, 200*time.Millisecond); err != nil {
			return out, err
		}
	}
}

// refusedChanged reports whether the CLI's output ends with its refusal of a write because what
// it showed changed since it was read (cmd/onceflow's refused; TestRefused_says_nothing_was_written_and_why
// there keeps the words).
func refusedChanged(out string) bool {
	lines := strings.Split(strings.TrimSpace(out), "\n")
	last := lines[len(lines)-1]
	return strings.Contains(last, "refused, nothing written: ") && strings.Contains(last, operator.ErrChanged.Error())
}

func accountID(i int) string { return fmt.Sprintf("acct-%03d", i) }

func pause(ctx context.Context, d time.Duration) error {
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(d):
		return nil
	}
}
