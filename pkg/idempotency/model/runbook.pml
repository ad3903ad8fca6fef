/*
 * runbook.pml: the operator, shared by both protocols (each defines op_discard, op_skip,
 * op_release and op_redrive). First up to OPS commands at will, at any moment, with live
 * traffic (discard any letter in view, skip or release any hold, redrive with or without --to,
 * fix any cause); then docs/runbook.md followed to its end, in rounds: the operator looks at
 * the letter heading each group of the dead-letter queue (what `dlq list` shows) and decides on
 * its reason:
 *   malformed, not decodable, conflict: dlq discard;
 *   failed N times, moved by the queue: fix the cause; or, when it can never succeed, dlq
 *     discard, or hold skip (it heads the hold), keeping it for later; a moved letter with
 *     nothing to fix passes the decision to its group's moved letter that has a cause (NOCAUSE);
 *   held behind another, kept for later: nothing yet; but a moved letter of a message
 *     skipped at will is decided first, as a moved letter (kept_moved);
 * then runs dlq redrive --group for each group it decided (--to when a letter SQS moved is to
 * go back), which sends the group's letters it began with, in order (a letter that comes in
 * while it runs is left, late, for the next look). Once nothing is held or stuck, a
 * letter kept for later may be discarded, or its cause fixed and it redriven (applied out of
 * order), or left. A discarded or skipped event's cause is never fixed afterwards (nofix):
 * that is the operator's decision that it can never succeed (NEVERFIX: a cause nobody can fix). The property `live` (<>[] clean) says the
 * runbook always ends with nothing held or stuck.
 */

/* The letter of group g0's blocker, the head of its held list, if it is in the dead-letter
 * queue and not the very letter kept for later (bl; DMAX: none): another letter of a skipped
 * event (a producer's re-send, held by the backstop by its own id before it was decoded) that
 * heads the hold is decided as a blocker. `dlq discard`, `dlq show` and `hold skip
 * --queue` take a letter by its id among the letters in view: on AWS a receive returns as many
 * of one group as it can, up to ten, so a group's first ten letters (the model's DMAX is
 * less). */
inline blocker(a_g0) {
	bl = DMAX;
	if
	:: h[a_g0].n > 0 ->
		x = 0;
		do
		:: x < dn -> if :: bl == DMAX && grp[dl[x].pay] == a_g0 && dl[x].orig == h[a_g0].orig[0] && !HAS(kept, dl[x].orig) -> bl = x :: else fi; x++
		:: else -> break
		od
	:: else
	fi;
	skip
}

/* The group's first letter kept for later that the queue moved, of a message skipped at will
 * (bl; DMAX: none). A letter kept for later waits for the later phase, but not that one: its
 * message may crash the function (it was skipped while it crash-looped, its letter not there
 * to move), and the group's redrive would send it before the letter decided and take that
 * letter's batch down with it again (found by the model, scenario 18: redriven with its group
 * for ever). It is decided first, as any moved letter: its cause fixed, or discarded. A letter
 * of a message the runbook skipped (nofix: failed, it cannot be fixed now) crashes nothing, and
 * still waits (WAITS). BREAK=7 lets every kept letter wait: a round never decides one, here
 * or where a moved letter with nothing to fix passes its decision on (NOCAUSE). */
#if BREAK == 7
#define WAITS(j) KEPT(j)
#else
#define WAITS(j) (KEPT(j) && nofix[dl[j].pay])
#endif
inline kept_moved(a_g0) {
	bl = DMAX;
	x = 0;
	do
	:: x < dn -> if :: bl == DMAX && grp[dl[x].pay] == a_g0 && KEPT(x) && !WAITS(x) && dl[x].why == W_MOVED -> bl = x :: else fi; x++
	:: else -> break
	od
}

/* Payload p's letter, moved by the queue, has no cause to decide: its cause is fixed, its event
 * decided (`dlq show`), or it neither fails nor crashes. */
#define NOCAUSE(p) (fixed[p] || DECIDED(eid[p], p) || (kind[p] != K_FAIL && kind[p] != K_CRASH))

/* What the operator sees of letter j0: lp, lo, w, lg. */
inline look(a_j0) {
	lj = a_j0; lp = dl[lj].pay; olo = dl[lj].orig; w = dl[lj].why; lg = grp[lp]
}

/* The reasons whose path in the runbook is a discard, never a fix: malformed, not decodable,
 * a conflict. A round discards such a letter (decide); so does the later phase, a letter kept
 * for later not being always one that failed (LATER_FIXABLE: BREAK=6 lets it fix any letter,
 * as before scenario 17: the operator "fixes" a malformed letter and redrives it for ever). */
#define DISCARD_ONLY(w) ((w) == W_MALF || (w) == W_UNDEC || (w) == W_CONFL)
#if BREAK == 6
#define LATER_FIXABLE(w) 1
#else
#define LATER_FIXABLE(w) (!DISCARD_ONLY(w))
#endif

/* The operator's letter in hand, forgotten once decided. */
#define FORGET lj = 0; lp = 0; olo = 0; lg = 0; w = 0

/* The operator's steps, the values of nxt: one command's call each (or one look), as the
 * consumer's steps are its calls. */
#define O_OPS    0      /* commands at will (or the runbook's first step) */
#define O_RUN    1      /* the runbook: the start of a round, or later */
#define O_GROUP  2      /* the round: the look at group gg and its decision */
#define O_LOOKG  3      /* (OPSPLIT) the look at group gg, once its check held */
#define O_DISCW  4      /* dlq discard: its transaction */
#define O_DISCD  5      /* dlq discard: the letter's deletion */
#define O_FAILED 6      /* a letter failed or moved: fix, discard or skip */
#define O_SKIPW  7      /* hold skip: its write */
#define O_SKIPQ  8      /* hold skip --queue: the letter requeued */
#define O_RDCHK  9      /* the round's redrive of group gg, if anything is left */
#define O_RD     10     /* dlq redrive: one letter */
#define O_WAIT   11     /* nothing decided: a wait for a change */

/* Consecutive looks of the operator (reads, with no command between them) are one look at the
 * console, taken at one moment, as each look always was; -DOPSPLIT takes each at a moment of its
 * own (a step each, as the runbook's text is written), to check that it changes no verdict. */
#ifdef OPSPLIT
#define LOOKED(n) nxt = n; goto stepped
#else
#define LOOKED(n) nxt = n
#endif

/* What a wait for a change watches: the letters and the holds' heads as the round saw them (the
 * dead-letter queue's length, each hold's length and head). A round that decides nothing runs no
 * command, so its looks are one step, and what it saw is the world as it is when it waits: the
 * view is taken then, and a round that acts keeps none. With OPSPLIT, each look a step of its
 * own, the view is taken at the round's start and at each group's look. */
#ifdef OPSPLIT
#define VIEW_AT_START sdn = dn; sn0 = h[0].n; sn1 = h[1].n; so0 = h[0].orig[0]; so1 = h[1].orig[0]
#define VIEW_OF(g) if :: (g) == 0 -> sn0 = h[0].n; so0 = h[0].orig[0] :: else -> sn1 = h[1].n; so1 = h[1].orig[0] fi
#define VIEW_AT_WAIT skip
#else
#define VIEW_AT_START skip
#define VIEW_OF(g) skip
#define VIEW_AT_WAIT sdn = dn; sn0 = h[0].n; sn1 = h[1].n; so0 = h[0].orig[0]; so1 = h[1].orig[0]
#endif

/* The runbook's decision for group g0 (runbook_decide): the letter to decide and its reason
 * (what `hold get` and `dlq list` show), the view a wait watches, and what to do: malformed, not
 * decodable or a conflict: discard (O_DISCW); failed or moved: fix the cause, discard, or
 * (failed, heading the hold) skip (O_FAILED); held behind another, or kept for later: nothing
 * now (the redrive that ends the round sends it). */
inline decide(a_g0) {
	/* `hold get` names the blocker: its letter is the one to decide (runbook.md, "Held
	 * behind another"), wherever it is among its group's letters (a redrive of it before its
	 * decision sent it back behind live messages: its held letters come first then); with
	 * none, the group's first letter not kept for later (`dlq list`); before either, a moved
	 * letter of a message skipped at will (kept_moved) */
	kept_moved(a_g0);
	if :: bl == DMAX -> blocker(a_g0) :: else fi;
	if
	:: bl < DMAX -> look(bl)
	:: else ->
		x = 0;
		do
		:: x < dn && (grp[dl[x].pay] != a_g0 || KEPT(x)) -> x++
		:: else -> break
		od;
		if :: x < dn -> look(x) :: else -> lj = DMAX fi   /* every letter kept, the blocker's not there */
	fi;
	/* a letter the queue moved that has no cause now (its cause fixed, its event decided, or it
	 * neither fails nor crashes) only went with a batch another message took down: the decision
	 * passes to its group's first moved letter that has one, if there is one (not one the runbook
	 * skipped: it waits). Found by the model, scenarios 20 and 21: the round fixed the blocker's
	 * letter again and again while the crasher behind it took their batches down. */
	if
	:: lj < DMAX && w == W_MOVED && NOCAUSE(lp) && BREAK != 8 ->
		x = 0;
		do
		:: x < dn && !(grp[dl[x].pay] == a_g0 && dl[x].why == W_MOVED && !NOCAUSE(dl[x].pay) && !WAITS(x)) -> x++
		:: else -> break
		od;
		if :: x < dn -> look(x) :: else fi
	:: else
	fi;
	VIEW_OF(a_g0);
	bw = (lj == DMAX || (w == W_HELD && h[lg].n > 0 && h[lg].orig[0] != olo));
	bl = 0; SCRATCH0;
	if :: lj < DMAX -> printf("MSC: runbook: letter of m%d (e%d): %e\n", dl[lj].src, lp, w) :: else fi;
	if
	:: lj == DMAX || (w == W_HELD && bw) ->
		/* nothing to decide, or held behind a blocker whose letter is not there yet: wait */
		FORGET; gg++; LOOKED(O_GROUP)
	:: lj < DMAX && w == W_HELD && !bw ->
		/* its blocker is gone, or it is the blocker now: the redrive sends it */
		FORGET; acted = 1; dg = dg | BIT(a_g0); gg++; LOOKED(O_GROUP)
	:: lj < DMAX && DISCARD_ONLY(w) -> nxt = O_DISCW
	:: lj < DMAX && (w == W_FAILED || w == W_MOVED) -> nxt = O_FAILED
	fi;
	bw = 0
}

/* The round from group gg on: each group with letters not kept for later, or held, decided in
 * turn, up to the first command to run (nxt), or the round's end: a redrive of each group
 * decided (O_RDCHK) if anything was, else a wait for a change (O_WAIT). */
inline groups() {
	do
	:: nxt == O_GROUP && gg < NG && !(hd[gg] < DMAX && (!hk[gg] || h[gg].n > 0)) -> gg++
	:: nxt == O_GROUP && gg < NG && hd[gg] < DMAX && (!hk[gg] || h[gg].n > 0) ->
#ifdef OPSPLIT
		nxt = O_LOOKG; goto stepped
#else
		decide(gg)
#endif
	:: nxt == O_GROUP && gg >= NG && acted -> gg = 0; LOOKED(O_RDCHK); rdchk(); break
	:: nxt == O_GROUP && gg >= NG && !acted -> gg = 0; VIEW_AT_WAIT; nxt = O_WAIT; break
	:: nxt != O_GROUP -> break
	od
}

/* The round's view and decisions, forgotten at its end. */
#define ROUND_END acted = 0; dg = 0; gg = 0; sdn = 0; sn0 = 0; sn1 = 0; so0 = 0; so1 = 0

/* The round's end, after its decisions: a redrive of each group decided (--group), from group
 * gg on, while a letter not kept for later, or a moved one of a message skipped at will, is
 * left (O_RD); then the round's view forgotten. A letter of another group, which came in after
 * the look, waits for the next round (found by the model, scenario 13: a letter that
 * crash-loops, always back while a redrive runs, was never decided). */
inline rdchk() {
	do
	:: gg < NG && HAS(dg, gg) ->
		kept_moved(gg);    /* a moved letter of a message skipped at will is sent too, once decided */
		if
		:: unkept > 0 || bl < DMAX -> bl = 0; x = 0; rdgm = BIT(gg); ctx = O_RDCHK; nxt = O_RD; break
		:: else -> bl = 0; x = 0; gg++
		fi
	:: gg < NG && !HAS(dg, gg) -> gg++
	:: gg >= NG -> ROUND_END; nxt = O_RUN; break
	od
}

/* After a command of the round (a discard, a skip, a fix) for group gg: the next group. */
#define DECIDED_GROUP FORGET; acted = 1; dg = dg | BIT(gg); gg++; nxt = O_GROUP

/* After a command: back where it was run from. */
inline after_command() {
	if
	:: ctx == O_OPS -> FORGET; lg = 0; nxt = O_OPS
	:: ctx == O_GROUP -> DECIDED_GROUP
	:: ctx == O_RDCHK -> gg++; nxt = O_RDCHK
	:: ctx == O_RUN -> FORGET; nxt = O_RUN
	fi;
	ctx = 0
}

proctype Operator() {
	byte nxt, ctx, lp, lg, le, lj, leftg, rdgm, ops, gg, bl, sdn, sn0, sn1, dg;
	SCRATCH_DECL;
	mtype w;
	bit rdone, acted, bw;

end_runbook:
	do
	:: atomic {
		if
#if OPS > 0
		/* commands at will, before the runbook: discard any letter in view, skip or release any
		 * hold, redrive, fix any cause. A command whose object is gone by the time it runs (a
		 * skip or release of a hold emptied meanwhile) does nothing and is left out: whatever the
		 * operator could do after it, it can do without it, with one command more to spend. */
		:: nxt == O_OPS && ops < OPS ->
			ops++;
			if :: lg = 0 :: lg = 1 fi;          /* a group, and a command for it */
			if
			:: hd[lg] < DMAX -> lj = hd[lg]; ctx = O_OPS; discard_write(lj); nxt = O_DISCD
			:: h[lg].n > 0 -> skip_write(lg); if :: nxt = O_OPS :: olo != 0 -> ctx = O_OPS; nxt = O_SKIPQ fi
			:: h[lg].n > 0 -> op_release(lg); nxt = O_OPS
			:: dn > 0 && lg == 0 -> rdgm = BIT(0) | BIT(1); ctx = O_OPS; nxt = O_RD   /* every group: lg 0 stands for both */
			:: lj = 1;                      /* fix the cause of some payload */
				do
				:: lj < NP -> lj++
				:: break
				od;
				if :: !HAS(NEVERFIX, lj) -> FIX(lj) :: else fi;
				nxt = O_OPS
			fi;
			if :: nxt == O_OPS -> FORGET; lg = 0 :: else fi
#endif

		/* the runbook, followed to its end: rounds of a decision for each letter in view (the
		 * head of each group), then a redrive of what is left, until nothing is held or stuck */
		:: (nxt == O_OPS || nxt == O_RUN) && clean -> goto finished

		:: (nxt == O_OPS || nxt == O_RUN) && clean && (hd[0] < DMAX || hd[1] < DMAX) ->
			/* later, once nothing is held or stuck: a letter kept for later is discarded, or its
			 * cause fixed and it is redriven (applied out of order), decided by its reason as in a
			 * round: malformed, not decodable or a conflict, discarded (a letter kept for later
			 * is not always one that failed: a skip takes the hold's head when it runs, which a
			 * message applied meanwhile may have changed). Nothing else can move while all is
			 * clean, so the look and a discard are one step. */
			ops = 0;
			if :: hd[0] < DMAX -> look(hd[0]) :: else -> look(hd[1]) fi;
			printf("MSC: runbook, later: letter of m%d (e%d)\n", dl[lj].src, lp);
			if
			:: discard_write(lj); discard_delete(lj); nofix[lp] = 1; FORGET; nxt = O_RUN
			:: !nofix[lp] && !HAS(NEVERFIX, lp) && LATER_FIXABLE(w) ->
				FIX(lp); printf("MSC: fix the cause of e%d\n", lp);
				rdgm = BIT(grp[lp]); ctx = O_RUN; nxt = O_RD
			fi

		:: (nxt == O_OPS || nxt == O_RUN) && ((hd[0] < DMAX && (!hk[0] || h[0].n > 0)) || (hd[1] < DMAX && (!hk[1] || h[1].n > 0))) ->
			/* a round, for a group with letters not kept for later, or held: what the operator
			 * sees (the letters, the holds' heads), a decision for each group, then a redrive if
			 * anything was decided; with nothing to decide (every letter held behind a blocker
			 * whose letter is still on its way), wait for a change */
			ops = 0;
			VIEW_AT_START; acted = 0; dg = 0; gg = 0;
			LOOKED(O_GROUP);
			groups()

		:: nxt == O_GROUP -> groups()

#ifdef OPSPLIT
		:: nxt == O_LOOKG -> nxt = O_GROUP; decide(gg); groups()
#endif

		:: nxt == O_DISCW -> ctx = O_GROUP; discard_write(lj); nxt = O_DISCD

		:: nxt == O_DISCD ->
			discard_delete(lj);
			if :: ctx == O_GROUP -> nofix[lp] = 1 :: else fi;
			after_command()

		:: nxt == O_FAILED && !nofix[lp] && !HAS(NEVERFIX, lp) ->
			FIX(lp); printf("MSC: fix the cause of e%d\n", lp); DECIDED_GROUP
		:: nxt == O_FAILED -> ctx = O_GROUP; discard_write(lj); nxt = O_DISCD
		:: nxt == O_FAILED && !NOSKIP && w == W_FAILED && h[lg].n > 0 && h[lg].orig[0] == olo ->
			nofix[lp] = 1; ctx = O_GROUP; nxt = O_SKIPW

		:: nxt == O_SKIPW ->
			skip_write(lg);
			if :: olo != 0 -> nxt = O_SKIPQ :: else -> after_command() fi

		:: nxt == O_SKIPQ -> skip_requeue(); after_command()

		:: nxt == O_RD -> produce(0); d_step { SCRATCH0 }; redrive_step();   /* the producer's sends up to now first */ if :: rdone -> rdone = 0; after_command() :: else fi

		:: nxt == O_RDCHK -> rdchk()

		:: nxt == O_WAIT && (clean || dn != sdn || h[0].n != sn0 || h[1].n != sn1 || h[0].orig[0] != so0 || h[1].orig[0] != so1) ->
			ROUND_END; nxt = O_RUN
		fi;
stepped:
		CANON
	}
	od;
finished:
	skip
}
