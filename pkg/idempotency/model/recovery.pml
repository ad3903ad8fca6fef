/*
 * recovery.pml: the recovery protocol the code must follow (issue 26), step by step as
 * docs/recovery-model.md describes it; each step names the Go function it stands for. What is
 * abstracted is said at the top of env.pml. Checked by `make model` (every scenario) and by
 * `make test` (a set of them): model_test.go.
 *
 * Break a step deliberately with -DBREAK=n (model_test.go proves each check can fail):
 *   BREAK=1  HoldGroup's check and write are two calls again (a read of the record, then the
 *            hold's write): case 4 of issue 26 comes back
 *   BREAK=2  a redelivery is not answered from its record before its handler: case 2
 *   BREAK=3  a held entry is known by event id as well as by message: case 5
 *   BREAK=4  a skipped message holds its group again: case 1
 *   BREAK=5  the backstop's entry of a message answered without a commit stays: case 6
 *   BREAK=6  the runbook's later phase fixes and redrives a letter kept for later whatever its
 *            reason (runbook.pml): a malformed one, kept by a skip, is redriven for ever
 *   BREAK=7  a round never decides a moved letter of a message skipped at will (runbook.pml):
 *            a crash-looping message skipped at will is redriven with its group for ever
 *   BREAK=8  a round decides a moved letter without a cause, never its group's moved letter
 *            that has one (runbook.pml): the crasher behind it is redriven for ever
 *   BREAK=9  dlq redrive sends letters that came in after it began (cli_fixed.pml): a crasher's
 *            letter is sent before anyone looked at it, for ever
 */

#include "env.pml"

#ifndef BREAK
#define BREAK 0
#endif
#ifndef HCAP
#define HCAP 6          /* a model bound: the hold spreads over as many items as it needs */
#endif

/* Hold: the group's held list, in the group's order, each entry the id its message was first
 * sent as (Held.MessageID: the entry's identity) with its event id (shown, never matched) and,
 * kept with the hold, the first ids of messages an operator skipped (Hold.Skipped). */
typedef Hold {
	byte n;
	byte orig[HCAP];
	byte ev[HCAP];
	byte gp[HCAP];      /* ghost: the payload of the held message */
	int  skipped;       /* first message ids skipped: they never hold the group again */
	byte skippay        /* ... and the events skipped (by event id and payload hash: a payload) */
};
Hold h[NG];

/* holdlist.Same: an entry is one message: the id it was first sent as, or, once its event was
 * decoded, its event id and payload hash (a producer's re-send of the same event under a new
 * message id). A reused event id with another payload (a conflict) is another message.
 * (BREAK=3: the event id alone, as before issue 26.) gp is the payload, standing for the hash:
 * it is known exactly when ev is. */
#if BREAK == 3
#define SAME(g, x, e, o, p) (h[g].orig[x] == (o) || (h[g].ev[x] != 0 && h[g].ev[x] == (e)))
#else
#define SAME(g, x, e, o, p) (h[g].orig[x] == (o) || (h[g].ev[x] != 0 && h[g].ev[x] == (e) && h[g].gp[x] == (p)))
#endif

/* table.Decides (pkg/internal/table) and undecidedCheck, as a condition: the event of
 * payload p is decided when its record is live with this payload (applied, discarded). The
 * copy a discard keeps of a conflict's payload (table.DiscardedKey) decides nothing: that
 * payload sent again conflicts again, and the runbook discards it again. */
#define DECIDED(e, p) (recp[e] == (p))

/* holdlist.SkippedAs: message o (event e, payload p) was skipped: a skipped entry is the same
 * message (holdlist.Same): by the id it was first sent as, or, when both were decoded, by event
 * id and payload hash. */
#if BREAK == 4
#define SKIPPED(g, o, e, p) 0
#else
#define SKIPPED(g, o, e, p) (HAS(h[g].skipped, o) || ((e) != 0 && HAS(h[g].skippay, p)))
#endif

/* Entry x off group g's list. */
inline hold_drop(a_g, a_x) {
	k = a_x;
	do
	:: k + 1 < h[a_g].n -> h[a_g].orig[k] = h[a_g].orig[k+1]; h[a_g].ev[k] = h[a_g].ev[k+1]; h[a_g].gp[k] = h[a_g].gp[k+1]; k++
	:: else -> break
	od;
	h[a_g].n--; h[a_g].orig[h[a_g].n] = 0; h[a_g].ev[h[a_g].n] = 0; h[a_g].gp[h[a_g].n] = 0
}

/* holdlist.Add: the message joins the end unless it is listed (it keeps its place, and learns its
 * event id: its own entry, by the id it was first sent as, before an earlier entry of its event)
 * or skipped (then nothing). */
inline hold_add(a_g, a_e, a_o, a_p) {
	x = 0; found = 0;
	do
	:: x < h[a_g].n -> if :: h[a_g].orig[x] == a_o -> found = 1; break :: else -> x++ fi
	:: else -> break
	od;
	if
	:: !found ->
		x = 0;
		do
		:: x < h[a_g].n -> if :: SAME(a_g, x, a_e, a_o, a_p) -> found = 1; break :: else -> x++ fi
		:: else -> break
		od
	:: else
	fi;
	if
	:: SKIPPED(a_g, a_o, a_e, a_p) -> skip
	:: !SKIPPED(a_g, a_o, a_e, a_p) && found && h[a_g].ev[x] == 0 -> h[a_g].ev[x] = a_e; h[a_g].gp[x] = a_p
	:: !SKIPPED(a_g, a_o, a_e, a_p) && !found ->
		assert(h[a_g].n < HCAP);                /* a model bound */
		h[a_g].orig[h[a_g].n] = a_o; h[a_g].ev[h[a_g].n] = a_e; h[a_g].gp[h[a_g].n] = a_p; h[a_g].n++
	:: else
	fi
}

/* holdlist.Remove: the message off the list, every entry of it wherever it is (a re-send the
 * backstop listed by its own id behind its event's first message is the same event). */
inline hold_remove(a_g, a_e, a_o, a_p) {
	x = 0;
	do
	:: x < h[a_g].n && !SAME(a_g, x, a_e, a_o, a_p) -> x++
	:: x < h[a_g].n && SAME(a_g, x, a_e, a_o, a_p) -> hold_drop(a_g, x)
	:: x >= h[a_g].n -> break
	od;
	skip
}

/* Whether message o is on group g's held list (found). */
inline hold_lists(a_g, a_o) {
	x = 0; found = 0;
	do
	:: x < h[a_g].n -> if :: h[a_g].orig[x] == a_o -> found = 1 :: else fi; x++
	:: else -> break
	od;
	skip
}

#include "ids.pml"
#include "producer.pml"
#include "consumer_fixed.pml"
#include "cli_fixed.pml"
#include "runbook.pml"

init {
	byte p = 1;
	SCRATCH_DECL;
	atomic {
		do
		:: p <= NP -> eid[p] = p; p++
		:: else -> break
		od;
		SETUP;
		NEXT_RESEND;
		recount();
		run Consumer(); run Operator();
#if DEPLOYS > 0
		run Deploy()
#endif

	}
}

ltl live { <> [] clean }
