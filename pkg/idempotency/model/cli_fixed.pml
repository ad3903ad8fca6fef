/*
 * cli_fixed.pml: the operator's commands (cmd/onceflow, on operator.Admin and
 * pkg/deadletter) as they must be after issue 26. Each runs inside proctype Operator, whose
 * locals they use; CLISTOP between two calls is the CLI stopping (a crash, a lost connection).
 */

#define CLISTOP (nclicrash < CLICRASH)

/* onceflow dlq discard (decide.go discard, Admin.Discard): dlq.Take of letter j0, then
 * one TransactWriteItems, conditional on the record as shown: no record: the Discarded record
 * (IF attribute_not_exists(pk) OR expiresAt < :now); a record of this payload (applied or
 * discarded already: the letter is a duplicate): a ConditionCheck that it is still as shown,
 * nothing recorded; a record of another payload (a conflict): the letter's copy at
 * table.DiscardedKey, and the message recorded as discarded (table.MessageKey, by the id it
 * was first sent as); no event id (an undecodable body): the message recorded as discarded. In every case the message leaves the held list (by the id it was first sent
 * as, conditional on the hold's version). Then dlq.Delete. Never refused for a decided
 * event: the letter always leaves the queue. */
inline op_discard(a_j0) {
	d_step {
		lp = dl[a_j0].pay; lo = dl[a_j0].orig; lg = grp[lp];
		if :: kind[lp] == K_UNDEC -> le = 0 :: else -> le = eid[lp] fi;
		if
		:: le != 0 && recp[le] == 0 -> recp[le] = lp; recd[le] = 1; dec[lp] = D_DISCARDED
		:: le != 0 && recp[le] == lp -> skip                         /* decided already */
		:: le != 0 && recp[le] != 0 && recp[le] != lp -> copyp[le] = lp; mdec = mdec | BIT(lo); dec[lp] = D_DISCARDED
		:: le == 0 -> mdec = mdec | BIT(lo); dec[lp] = D_DISCARDED
		fi;
		hold_remove(lg, le, lo, lp); SCRATCH0
	};
	printf("MSC: dlq discard letter of m%d (e%d)\n", dl[a_j0].src, lp);
	if
	:: CLISTOP -> nclicrash++; printf("MSC: the CLI stops\n")    /* the letter stays, visible again */
	:: skip -> d_step { dlq_delete(a_j0); check_not_lost(); SCRATCH0 }
	fi
}

/* onceflow hold skip [--queue] (cmd/onceflow hold skip, Admin.SkipBlocker): the head popped and
 * recorded in Skipped (the entry: the id it was first sent as and, when it was decoded, its
 * event id and payload hash), its event's other entries off (a re-send's), the next held
 * message the head; one write conditional on the
 * hold's version and head as shown. With --queue (a_q), the blocker's letter was taken first
 * (dlq.Take), and once the skip is written it is sent again to the end of the
 * dead-letter queue under a fresh deduplication id, then the taken one deleted
 * (dlq.Requeue): behind its group's other letters. Ghost: its order is given up, its
 * letter kept for later. */
inline op_skip(a_g0, a_q) {
	d_step {
		if
		:: h[a_g0].n > 0 ->
			printf("MSC: hold skip group %d past m%d\n", a_g0, h[a_g0].orig[0]);
			lo = h[a_g0].orig[0];
			gaveup[h[a_g0].gp[0]] = 1; kept = kept | BIT(lo);
			h[a_g0].skipped = h[a_g0].skipped | BIT(lo);
			if
			:: h[a_g0].ev[0] != 0 ->        /* the event too: its id and payload hash */
				keptp = keptp | BIT(h[a_g0].gp[0]);
				h[a_g0].skippay = h[a_g0].skippay | BIT(h[a_g0].gp[0])
			:: else
			fi;
			le = h[a_g0].ev[0]; bl = h[a_g0].gp[0];
			hold_drop(a_g0, 0);
			if :: le != 0 -> hold_remove(a_g0, le, lo, bl) :: else fi;   /* its event's other entries */
			le = 0; bl = 0;
			recount()
		:: else -> lo = 0
		fi; SCRATCH0
	};
	if
	:: a_q && lo != 0 ->
		/* dlq.Requeue of the letter taken (its message's first id lo), if there is one */
		atomic {
			lj = 0;
			do
			:: lj < dn && dl[lj].orig != lo -> lj++
			:: else -> break
			od
		};
		if
		:: lj < dn && CLISTOP -> nclicrash++; printf("MSC: the CLI stops\n")   /* the letter stays */
		:: lj < dn ->
			d_step {
				printf("MSC: hold skip --queue: letter of m%d moved behind its group's others\n", dl[lj].src);
				dlq_append(dl[lj].pay, dl[lj].orig, dl[lj].src, dl[lj].why);
				dlq_delete(lj); SCRATCH0
			}
		:: lj >= dn
		fi;
		lj = 0
	:: else
	fi;
	lo = 0
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

/* onceflow dlq redrive (dlq.Redrive): as today, but a letter SQS moved, which names no
 * source queue, goes to the dead-letter queue's only source queue (ListDeadLetterSourceQueues)
 * without --to; with --group (Filter.Group), the letters of the groups in a_gm alone, the
 * others' left in place ("skipped"). */
inline op_redrive(a_to, a_gm) {
	sentm = 0; leftg = 0; rdone = 0;
	do
	:: rdone -> sentm = 0; leftg = 0; rdone = 0; break
	:: !rdone ->
		atomic {
			x = 0;
			do
			:: x < dn && HAS(leftg, grp[dl[x].pay]) -> x++
			:: else -> break
			od;
			if
			:: x >= dn -> rdone = 1; printf("MSC: redrive ends\n")
			:: x < dn && !HAS(a_gm, grp[dl[x].pay]) -> leftg = leftg | BIT(grp[dl[x].pay])   /* --group: "skipped" */
			:: x < dn && HAS(a_gm, grp[dl[x].pay]) && HAS(sentm, dl[x].src) -> leftg = leftg | BIT(grp[dl[x].pay])   /* "again" */
			:: x < dn && HAS(a_gm, grp[dl[x].pay]) && !HAS(sentm, dl[x].src) && ROOM ->
				sqs_send(dl[x].pay, dl[x].orig);
				sentm = sentm | BIT(nid);
				printf("MSC: redrive letter of m%d (e%d) as m%d\n", dl[x].src, dl[x].pay, nid);
				if
				:: CLISTOP -> nclicrash++; rdone = 1    /* sent, not deleted */
				:: skip -> dlq_delete(x); check_not_lost()
				fi
			fi; SCRATCH0
		}
	od
}
