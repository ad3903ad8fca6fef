/*
 * runbook.pml: the operator, shared by both protocols (each defines op_discard, op_skip,
 * op_release and op_redrive). First up to OPS commands at will, at any moment, with live
 * traffic (discard any letter in view, skip or release any hold, redrive with or without --to,
 * fix any cause); then docs/runbook.md followed to its end, in rounds: the operator looks at
 * the letter heading each group of the dead-letter queue (what `dlq list` shows) and decides on
 * its reason:
 *   malformed, not decodable, conflict: dlq discard;
 *   failed N times, moved by the queue: fix the cause; or, when it can never succeed, dlq
 *     discard, or hold skip (it heads the hold), keeping it for later;
 *   held behind another, kept for later: nothing yet;
 * then runs dlq redrive --group for each group it decided (--to when a letter SQS moved is to
 * go back), which sends the group's letters left, in order. Once nothing is held or stuck, a
 * letter kept for later may be discarded, or its cause fixed and it redriven (applied out of
 * order), or left. A discarded or skipped event's cause is never fixed afterwards (nofix):
 * that is the operator's decision that it can never succeed (NEVERFIX: a cause nobody can fix). The property `live` (<>[] clean) says the
 * runbook always ends with nothing held or stuck.
 */

/* Whether letter j0 has letters of its group behind it that are not kept for later. */
inline behind(a_j0) {
	x = a_j0 + 1; bhind = 0;
	do
	:: x < dn -> if :: grp[dl[x].pay] == grp[dl[a_j0].pay] && !KEPT(x) -> bhind = 1 :: else fi; x++
	:: else -> break
	od;
	skip
}

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

/* What the operator sees of letter j0: lp, lo, w, lg, and whether letters of its group are
 * behind it (bhind). */
inline look(a_j0) {
	lj = a_j0; lp = dl[lj].pay; lo = dl[lj].orig; w = dl[lj].why; lg = grp[lp]; behind(lj)
}

/* The runbook's decision for the letter heading group g0 of the dead-letter queue, if any:
 * malformed, not decodable or a conflict: discard; failed or moved: fix the cause, or discard,
 * or (failed, heading the hold) skip; held behind another, or kept for later: nothing now (the
 * redrive that ends the round sends it). moved is set when a letter SQS moved is redriven. */
inline runbook_decide(a_g0) {
	atomic {
		/* `hold get` names the blocker: its letter is the one to decide (runbook.md, "Held
		 * behind another"), wherever it is among its group's letters (a redrive of it before its
		 * decision sent it back behind live messages: its held letters come first then); with
		 * none, the group's first letter not kept for later (`dlq list`) */
		blocker(a_g0);
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
		/* what a wait for a change watches: this group's hold as it was seen */
		if :: a_g0 == 0 -> sn0 = h[0].n; so0 = h[0].orig[0] :: else -> sn1 = h[1].n; so1 = h[1].orig[0] fi;
		bw = (lj == DMAX || (w == W_HELD && h[lg].n > 0 && h[lg].orig[0] != lo));
		bl = 0; SCRATCH0
	};
	if :: lj < DMAX -> printf("MSC: runbook: letter of m%d (e%d): %e\n", dl[lj].src, lp, w) :: else fi;
	if
	:: lj == DMAX -> bw = 0     /* nothing to decide: wait for the blocker's letter */
	:: lj < DMAX && w == W_HELD && bw ->
		bw = 0      /* held behind a blocker whose letter is not there yet: wait for it */
	:: lj < DMAX && w == W_HELD && !bw ->
		acted = 1; dg = dg | BIT(a_g0)  /* its blocker is gone, or it is the blocker now: the redrive sends it */
	:: lj < DMAX && (w == W_MALF || w == W_UNDEC || w == W_CONFL) ->
		op_discard(lj); nofix[lp] = 1; acted = 1; dg = dg | BIT(a_g0)
	:: lj < DMAX && (w == W_FAILED || w == W_MOVED) ->
		if
		:: !nofix[lp] && !HAS(NEVERFIX, lp) ->
			fixed[lp] = 1; printf("MSC: fix the cause of e%d\n", lp);
			if :: w == W_MOVED -> moved = 1 :: else fi
		:: op_discard(lj); nofix[lp] = 1
		:: !NOSKIP && w == W_FAILED && h[lg].n > 0 && h[lg].orig[0] == lo -> nofix[lp] = 1; op_skip(lg, 1)
		fi;
		acted = 1; dg = dg | BIT(a_g0)
	fi
}

/* Later, once nothing is held or stuck: a letter kept for later is discarded, or its cause
 * fixed and it is redriven (applied out of order). */
inline runbook_later(a_j0) {
	printf("MSC: runbook, later: letter of m%d (e%d)\n", dl[a_j0].src, lp);
	if
	:: op_discard(a_j0); nofix[lp] = 1
	:: !nofix[lp] && !HAS(NEVERFIX, lp) -> fixed[lp] = 1; printf("MSC: fix the cause of e%d\n", lp); op_redrive(0, BIT(grp[lp]))
	fi
}

proctype Operator() {
	byte lp, lo, lg, le, lj, leftg, ops, gg, bl, sdn, sn0, sn1, dg;
	SCRATCH_DECL;
	mtype w;
	bit refused, rdone, bhind, moved, acted, bw;

	/* commands at will, before the runbook */
#if OPS > 0
	do
	:: ops < OPS ->
		ops++;
		if :: lg = 0 :: lg = 1 fi;          /* a group, and a command for it */
		if
		:: hd[lg] < DMAX -> lj = hd[lg]; op_discard(lj)
		:: h[lg].n > 0 -> if :: op_skip(lg, 0) :: op_skip(lg, 1) fi
		:: h[lg].n > 0 -> op_release(lg)
		:: dn > 0 -> if :: moved = 0 :: moved = 1 fi; op_redrive(moved, BIT(0) | BIT(1)); moved = 0
		:: lj = 1;                      /* fix the cause of some payload */
			do
			:: lj < NP -> lj++
			:: break
			od;
			if :: !HAS(NEVERFIX, lj) -> fixed[lj] = 1 :: else fi
		fi;
		lj = 0; lg = 0
	:: break
	od;
#endif

	/* the runbook, followed to its end: rounds of a decision for each letter in view (the
	 * head of each group), then a redrive of what is left (--to when a letter SQS moved is
	 * among them), until nothing is held or stuck */
end_runbook:
	do
	:: clean -> break
	:: clean && (hd[0] < DMAX || hd[1] < DMAX) ->
		atomic { if :: hd[0] < DMAX -> look(hd[0]) :: else -> look(hd[1]) fi; SCRATCH0 };
		runbook_later(lj)
	:: (hd[0] < DMAX && (!hk[0] || h[0].n > 0)) || (hd[1] < DMAX && (!hk[1] || h[1].n > 0)) ->
		/* a round, for a group with letters not kept for later, or held: what the operator
		 * sees (the letters, the holds' heads), a decision for each group, then a redrive if
		 * anything was decided; with nothing to decide (every letter held behind a blocker
		 * whose letter is still on its way), wait for a change */
		atomic { sdn = dn; sn0 = h[0].n; sn1 = h[1].n; so0 = h[0].orig[0]; so1 = h[1].orig[0]; moved = 0; acted = 0; dg = 0; gg = 0 };
		do
		:: gg < NG -> if :: hd[gg] < DMAX && (!hk[gg] || h[gg].n > 0) -> runbook_decide(gg) :: else fi; gg++
		:: else -> break
		od;
		gg = 0;
		if
		:: acted ->
			/* a redrive of each group decided (--group): a letter of another group, which came
			 * in after the look, waits for the next (found by the model, scenario 13: a letter
			 * that crash-loops, always back while a redrive runs, was never decided) */
			do
			:: gg < NG -> if :: HAS(dg, gg) && unkept > 0 -> op_redrive(moved, BIT(gg)) :: else fi; gg++
			:: else -> break
			od;
			gg = 0
		:: !acted -> (clean || dn != sdn || h[0].n != sn0 || h[1].n != sn1 || h[0].orig[0] != so0 || h[1].orig[0] != so1)
		fi;
		atomic { moved = 0; acted = 0; dg = 0; sdn = 0; sn0 = 0; sn1 = 0; so0 = 0; so1 = 0 }
	od
}
