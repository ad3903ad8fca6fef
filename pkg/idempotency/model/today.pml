/*
 * today.pml: the recovery protocol AS THE CODE HAS IT before issue 26's fixes (main at
 * dc37b60): pkg/idempotency (group.go, hold.go, hold_commit.go, hold_full.go, commit.go,
 * outcome_writes.go, discarded.go, attempts.go, admin*.go), pkg/batch (engine.go, run.go),
 * pkg/sqsbatch (processor.go, consumer.go, attempts.go: the backstop), pkg/deadletter and
 * cmd/onceflow. It is kept to show what the checks find on it: docs/recovery-model.md lists
 * the counterexamples, and the Go test checks that each scenario of issue 26 still fails here.
 * What is abstracted is said at the top of env.pml.
 */

#define NOALARM 0       /* today makes no such promise: see env.pml */
#include "env.pml"

#ifdef ITEMCAP
#define HCAP ITEMCAP    /* held messages one hold item takes (400 KB in DynamoDB) */
#else
#define HCAP 6
#endif

/* Hold (hold.go): the group's held list, in the group's order; an entry is the event id (0:
 * not known, held before it was decoded) and the id the message was first sent as. */
typedef Hold {
	byte n;
	byte ev[HCAP];
	byte orig[HCAP];
	byte gp[HCAP];      /* ghost: the payload of the held message */
	int  skipped        /* none: today's protocol keeps no skips (env.pml's new_id reads it) */
};
Hold h[NG];

/* Held.same: one message, by event id or by first message id. */
#define SAME(g, x, e, o) ((h[g].ev[x] != 0 && h[g].ev[x] == (e)) || (h[g].orig[x] != 0 && h[g].orig[x] == (o)))

/* Hold.add (changeHold's change): e joins the end unless the list has it (it keeps its place;
 * an entry held by message id only learns its event id). hfull: the write would pass the item
 * size (ValidationException, ErrHoldFull), nothing written. */
inline hold_add(a_g, a_e, a_o, a_p) {
	x = 0; found = 0; hfull = 0;
	do
	:: x < h[a_g].n -> if :: SAME(a_g, x, a_e, a_o) -> found = 1; if :: h[a_g].ev[x] == 0 -> h[a_g].ev[x] = a_e :: else fi; break :: else -> x++ fi
	:: else -> break
	od;
	if
	:: !found && h[a_g].n == HCAP -> hfull = 1
	:: !found && h[a_g].n < HCAP -> h[a_g].ev[h[a_g].n] = a_e; h[a_g].orig[h[a_g].n] = a_o; h[a_g].gp[h[a_g].n] = a_p; h[a_g].n++
	:: else
	fi
}

/* Hold.remove: off the list wherever it is (the first entry that is the same). */
inline hold_remove(a_g, a_e, a_o) {
	x = 0;
	do
	:: x < h[a_g].n && !SAME(a_g, x, a_e, a_o) -> x++
	:: x < h[a_g].n && SAME(a_g, x, a_e, a_o) ->
		do
		:: x + 1 < h[a_g].n -> h[a_g].ev[x] = h[a_g].ev[x+1]; h[a_g].orig[x] = h[a_g].orig[x+1]; h[a_g].gp[x] = h[a_g].gp[x+1]; x++
		:: else -> break
		od;
		h[a_g].n--; h[a_g].ev[h[a_g].n] = 0; h[a_g].orig[h[a_g].n] = 0; h[a_g].gp[h[a_g].n] = 0;
		break
	:: x >= h[a_g].n -> break
	od;
	skip
}

#define RESET_DELIVERY skip
#include "consumer_today.pml"
#include "cli_today.pml"
#include "runbook.pml"
#include "producer.pml"

init {
	byte p = 1;
	SCRATCH_DECL;
	atomic {
		do
		:: p <= NP -> eid[p] = p; p++
		:: else -> break
		od;
		SETUP;
		recount();
		run Producer(); run Consumer(); run Operator()
	}
}

ltl live { <> [] clean }
