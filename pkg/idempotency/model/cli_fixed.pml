/*
 * cli_fixed.pml: the operator's commands (cmd/onceflow, on operator.Admin and
 * pkg/deadletter), each split into its calls. They run inside proctype Operator (runbook.pml),
 * one call to a step, and use its locals; CLISTOP between two calls is the CLI stopping (a
 * crash, a lost connection).
 */

#define CLISTOP (nclicrash < CLICRASH)

/* onceflow dlq discard (decide.go discard, Admin.Discard), its transaction: dlq.Take of
 * letter j0, then one TransactWriteItems, conditional on the record as shown: no record: the
 * Discarded record (IF attribute_not_exists(pk) OR expiresAt < :now); a record of this payload
 * (applied or discarded already: the letter is a duplicate): a ConditionCheck that it is still
 * as shown, nothing recorded; a record of another payload (a conflict): the letter's copy at
 * table.DiscardedKey, which decides nothing (so the model keeps no variable of it), and the
 * message recorded as discarded (table.MessageKey, by the id it was first sent as); no event id
 * (an undecodable body): the message recorded as discarded. In every case the message leaves
 * the held list (by the id it was first sent as, conditional on the hold's version). Never
 * refused for a decided event. */
inline discard_write(a_j0) {
	d_step {
		lp = dl[a_j0].pay; olo = dl[a_j0].orig; lg = grp[lp];
		if :: kind[lp] == K_UNDEC -> le = 0 :: else -> le = eid[lp] fi;
		if
		:: le != 0 && recp[le] == 0 -> recp[le] = lp; dec[lp] = D_DISCARDED
		:: le != 0 && recp[le] == lp -> skip                         /* decided already */
		:: le != 0 && recp[le] != 0 && recp[le] != lp -> mdec = mdec | BIT(olo); dec[lp] = D_DISCARDED
		:: le == 0 -> mdec = mdec | BIT(olo); dec[lp] = D_DISCARDED
		fi;
		hold_remove(lg, le, olo, lp); le = 0; SCRATCH0;
		printf("MSC: dlq discard letter of m%d (e%d)\n", dl[a_j0].src, lp)
	}
}

/* ... then dlq.Delete of the letter, unless the CLI stops first (the letter stays,
 * visible again): the letter always leaves the queue once the command has run to its end. */
inline discard_delete(a_j0) {
	if
	:: CLISTOP -> nclicrash++; printf("MSC: the CLI stops\n")
	:: d_step { dlq_delete(a_j0); check_not_lost(); SCRATCH0 }
	fi
}

/* onceflow hold skip [--queue] (cmd/onceflow hold skip, Admin.SkipBlocker), its write: the head
 * popped and recorded in Skipped (the entry: the id it was first sent as and, when it was
 * decoded, its event id and payload hash), its event's other entries off (a re-send's), the
 * next held message the head; one write conditional on the hold's version and head as shown
 * (lo: the skipped message's first id; 0: nothing was held). Ghost: its order is given up, its
 * letter kept for later. */
inline skip_write(a_g0) {
	d_step {
		if
		:: h[a_g0].n > 0 ->
			printf("MSC: hold skip group %d past m%d\n", a_g0, h[a_g0].orig[0]);
			olo = h[a_g0].orig[0];
			gaveup[h[a_g0].gp[0]] = 1; kept = kept | BIT(olo);
			h[a_g0].skipped = h[a_g0].skipped | BIT(olo);
			if
			:: h[a_g0].ev[0] != 0 ->        /* the event too: its id and payload hash */
				keptp = keptp | BIT(h[a_g0].gp[0]);
				h[a_g0].skippay = h[a_g0].skippay | BIT(h[a_g0].gp[0])
			:: else
			fi;
			le = h[a_g0].ev[0]; bl = h[a_g0].gp[0];
			hold_drop(a_g0, 0);
			if :: le != 0 -> hold_remove(a_g0, le, olo, bl) :: else fi;   /* its event's other entries */
			le = 0; bl = 0;
			recount()
		:: else -> olo = 0
		fi; SCRATCH0
	}
}

/* ... with --queue, the blocker's letter (taken first, dlq.Take) is sent again to the end
 * of the dead-letter queue under a fresh deduplication id, then the taken one deleted
 * (dlq.Requeue): behind its group's other letters; the CLI may stop before (the letter
 * stays). The letter is the first of message lo's: only the operator removes letters, so once
 * there it stays where it is until this step. */
inline skip_requeue() {
	lj = 0;
	do
	:: lj < dn && dl[lj].orig != olo -> lj++
	:: else -> break
	od;
	if
	:: lj < dn && CLISTOP -> nclicrash++; printf("MSC: the CLI stops\n")
	:: lj < dn ->
		d_step {
			printf("MSC: hold skip --queue: letter of m%d moved behind its group's others\n", dl[lj].src);
			dlq_append(dl[lj].pay, dl[lj].orig, dl[lj].src, dl[lj].why);
			dlq_delete(lj); SCRATCH0
		}
	:: lj >= dn
	fi;
	lj = 0; olo = 0
}

/* onceflow hold release (Admin.ReleaseHoldIf): the held list emptied (the skips kept),
 * conditional on the hold as shown. Ghost: the order of every held message is given up. */
inline op_release(a_g0) {
	d_step {
		printf("MSC: hold release group %d\n", a_g0);
		x = 0;
		do
		:: x < h[a_g0].n -> gaveup[h[a_g0].gp[x]] = 1; h[a_g0].orig[x] = 0; h[a_g0].ev[x] = 0; h[a_g0].gp[x] = 0; x++
		:: else -> break
		od;
		h[a_g0].n = 0; SCRATCH0
	}
}

/* A letter that came in after the redrive began (Outcome Late): the letters it began with are
 * the first rdn, since the consumer and SQS only append and nothing but the redrive deletes while
 * it runs. BREAK=9 sends it too. */
#if BREAK == 9
#define LATE(j) 0
#else
#define LATE(j) ((j) >= rdn)
#endif

/* onceflow dlq redrive (dlq.Redrive), one letter a step: in the dead-letter queue's order,
 * the first letter of a group not left yet; a letter of a group not in the redrive (--group,
 * Filter.Group: the groups in rdgm) leaves its group's letters in place ("skipped"), and so
 * does one this redrive sent already ("again") or one that came in after it began ("late",
 * LATE); a letter SQS moved, which names no source
 * queue, goes to the dead-letter queue's only source queue (ListDeadLetterSourceQueues) all
 * the same, so --to is not modelled apart. The letter is sent under a fresh deduplication id,
 * carrying the id it was first sent as, then deleted (the CLI may stop between: sent, not
 * deleted). Marking a group left reads only letters that stay where they are until the
 * operator's own steps (the consumer and SQS only append), so it is made in the step of the
 * next send. rdone: the redrive ended. */
inline redrive_step() {
	if :: !rdst -> rdst = 1; rdn = dn :: else fi;
	do
	:: true ->
		x = 0;
		do
		:: x < dn && HAS(leftg, grp[dl[x].pay]) -> x++
		:: else -> break
		od;
		if
		:: x >= dn -> rdone = 1; printf("MSC: redrive ends\n"); break
		:: x < dn && !HAS(rdgm, grp[dl[x].pay]) -> leftg = leftg | BIT(grp[dl[x].pay])   /* --group: "skipped" */
		:: x < dn && HAS(rdgm, grp[dl[x].pay]) && (LATE(x) || HAS(sentm, dl[x].src)) -> leftg = leftg | BIT(grp[dl[x].pay])   /* "late", "again" */
		:: x < dn && HAS(rdgm, grp[dl[x].pay]) && !LATE(x) && !HAS(sentm, dl[x].src) && ROOM ->
			d_step {
				sqs_send(dl[x].pay, dl[x].orig);
				sentm = sentm | BIT(nid);
				printf("MSC: redrive letter of m%d (e%d) as m%d\n", dl[x].src, dl[x].pay, nid);
				nid = 0
			};
			if
			:: CLISTOP -> nclicrash++; rdone = 1    /* sent, not deleted */
			:: d_step { dlq_delete(x); if :: x < rdn -> rdn-- :: else fi; check_not_lost(); SCRATCH0 }
			fi;
			break
		fi
	od;
	if :: rdone -> sentm = 0; leftg = 0; rdgm = 0; rdn = 0; rdst = 0 :: else fi;
	SCRATCH0
}
