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
 * then runs dlq redrive (--to when a letter SQS moved is to go back), which sends every letter
 * left, in order. Once nothing is held or stuck, a letter kept for later may be discarded, or
 * its cause fixed and it redriven (applied out of order), or left. A discarded or skipped
 * event's cause is never fixed afterwards (nofix): that is the operator's decision that it can
 * never succeed (NEVERFIX: a cause nobody can fix). The property `live` (<>[] clean) says the
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
	atomic { hd[a_g0] < DMAX -> look(hd[a_g0]); SCRATCH0 };
	printf("MSC: runbook: letter of m%d (e%d): %e\n", dl[lj].src, lp, w);
	if
	:: KEPT(lj) || w == W_HELD -> skip
	:: !KEPT(lj) && (w == W_MALF || w == W_UNDEC || w == W_CONFL) ->
		op_discard(lj); nofix[lp] = 1
	:: !KEPT(lj) && (w == W_FAILED || w == W_MOVED) ->
		if
		:: !nofix[lp] && !HAS(NEVERFIX, lp) ->
			fixed[lp] = 1; printf("MSC: fix the cause of e%d\n", lp);
			if :: w == W_MOVED -> moved = 1 :: else fi
		:: op_discard(lj); nofix[lp] = 1
		:: !NOSKIP && w == W_FAILED && h[lg].n > 0 && h[lg].orig[0] == lo -> op_skip(lg)
		fi
	fi
}

/* Later, once nothing is held or stuck: a letter kept for later is discarded, or its cause
 * fixed and it is redriven (applied out of order). */
inline runbook_later(a_j0) {
	printf("MSC: runbook, later: letter of m%d (e%d)\n", dl[a_j0].src, lp);
	if
	:: op_discard(a_j0); nofix[lp] = 1
	:: !nofix[lp] && !HAS(NEVERFIX, lp) -> fixed[lp] = 1; printf("MSC: fix the cause of e%d\n", lp); op_redrive(0)
	fi
}

proctype Operator() {
	byte lp, lo, lg, le, lj, leftg, ops, gg;
	SCRATCH_DECL;
	mtype w;
	int sentm;
	bit refused, rdone, bhind, moved;

	/* commands at will, before the runbook */
#if OPS > 0
	do
	:: ops < OPS ->
		ops++;
		if :: lg = 0 :: lg = 1 fi;          /* a group, and a command for it */
		if
		:: hd[lg] < DMAX -> lj = hd[lg]; op_discard(lj)
		:: h[lg].n > 0 -> op_skip(lg)
		:: h[lg].n > 0 -> op_release(lg)
		:: dn > 0 -> if :: moved = 0 :: moved = 1 fi; op_redrive(moved); moved = 0
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
	:: (hd[0] < DMAX && !hk[0]) || (hd[1] < DMAX && !hk[1]) ->
		moved = 0; gg = 0;
		do
		:: gg < NG -> if :: hd[gg] < DMAX && !hk[gg] -> runbook_decide(gg) :: else fi; gg++
		:: else -> break
		od;
		gg = 0;
		if :: unkept > 0 -> op_redrive(moved) :: else fi;
		moved = 0
	od
}
