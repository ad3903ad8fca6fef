/*
 * cli_today.pml: the operator's commands (cmd/onceflow, on operator.Admin and
 * pkg/deadletter) as the code has them today. Each runs inside proctype Operator, whose locals
 * they use; CLICP between two calls is the CLI stopping (a crash, a lost connection, Ctrl-C).
 */

/* The CLI stops between two calls while its budget lasts: the rest of the command is not run. */
#define CLISTOP (nclicrash < CLICRASH)

/* onceflow dlq discard (cmd/onceflow decide.go discard): dlq.Take of letter j,
 * eventIDOf, Admin.Record, then Admin.Discard: refused when the event has a record of the same
 * payload ("applied or decided already"); a record of another payload (a conflict) keeps it and
 * the letter's copy is put beside it; else the Discarded record, conditional on none, in one
 * transaction with leaveHold (Hold.remove by event id or message id, conditional on the hold's
 * version); then dlq.Delete. */
inline op_discard(a_j0) {
	d_step {
		lp = dl[a_j0].pay; lo = dl[a_j0].orig; lg = grp[lp];
		if :: kind[lp] == K_UNDEC -> le = 0 :: else -> le = eid[lp] fi;
		refused = 0;
		if
		:: le != 0 && recp[le] == lp -> refused = 1
		:: le != 0 && recp[le] != 0 && recp[le] != lp -> dec[lp] = D_DISCARDED; hold_remove(lg, le, lo)
		:: le != 0 && recp[le] == 0 ->
			recp[le] = lp; recd[le] = 1; dec[lp] = D_DISCARDED; hold_remove(lg, le, lo)
		:: le == 0 -> dec[lp] = D_DISCARDED; hold_remove(lg, 0, lo)
		fi; SCRATCH0
	};
	printf("MSC: dlq discard letter of m%d (e%d): %d\n", dl[a_j0].src, lp, refused);
	if
	:: refused -> printf("MSC: refused: applied or decided already\n")
	:: !refused && CLISTOP -> nclicrash++; printf("MSC: the CLI stops\n")
	:: !refused -> d_step { dlq_delete(a_j0); check_not_lost(); SCRATCH0 }
	fi
}

/* onceflow hold skip (Admin.SkipBlocker): the head recorded in Skipped, the next held message
 * the head; conditional on the hold as shown. Ghost: its order is given up, its letter kept. */
inline op_skip(a_g0, a_q) {   /* today: --queue did not exist (a_q unused) */
	d_step {
		if
		:: h[a_g0].n > 0 ->
			printf("MSC: hold skip group %d past m%d\n", a_g0, h[a_g0].orig[0]);
			gaveup[h[a_g0].gp[0]] = 1; kept = kept | BIT(h[a_g0].orig[0]);
			if :: h[a_g0].ev[0] != 0 -> keptp = keptp | BIT(h[a_g0].gp[0]) :: else fi;
			hold_remove(a_g0, h[a_g0].ev[0], h[a_g0].orig[0]);
			recount()
		:: else
		fi; SCRATCH0
	}
}

/* onceflow hold release (Admin.ReleaseHoldIf): the hold deleted, conditional on the hold as
 * shown. Ghost: the order of every held message is given up. */
inline op_release(a_g0) {
	d_step {
		printf("MSC: hold release group %d\n", a_g0);
		x = 0;
		do
		:: x < h[a_g0].n -> gaveup[h[a_g0].gp[x]] = 1; h[a_g0].ev[x] = 0; h[a_g0].orig[x] = 0; h[a_g0].gp[x] = 0; x++
		:: else -> break
		od;
		h[a_g0].n = 0; SCRATCH0
	}
}

/* onceflow dlq redrive [--to QUEUE] (dlq.Redrive): the letters in the dead-letter
 * queue's order, each sent to its source queue as a new message with the id it was first sent
 * as and a fresh deduplication id, then deleted; a group stops at its first letter left in
 * place: one dead-lettered again since this run sent it ("again"), one SQS moved that names no
 * source queue (without --to). */
inline op_redrive(a_to, a_gm) {     /* today's redrive has no --group: a_gm is not read */
	sentm = 0; leftg = 0; rdone = 0;
	do
	:: rdone -> sentm = 0; leftg = 0; rdone = 0; break
	:: !rdone ->
		atomic {
			/* the first letter of a group not stopped, in the queue's order */
			x = 0;
			do
			:: x < dn && HAS(leftg, grp[dl[x].pay]) -> x++
			:: else -> break
			od;
			if
			:: x >= dn -> rdone = 1; printf("MSC: redrive ends\n")
			:: x < dn && HAS(sentm, dl[x].src) -> leftg = leftg | BIT(grp[dl[x].pay])   /* "again" */
			:: x < dn && !HAS(sentm, dl[x].src) && dl[x].why == W_MOVED && !(a_to) ->
				leftg = leftg | BIT(grp[dl[x].pay])     /* "names no source queue" */
			:: x < dn && !HAS(sentm, dl[x].src) && !(dl[x].why == W_MOVED && !(a_to)) && ROOM ->
				sqs_send(dl[x].pay, dl[x].orig);
				sentm = sentm | BIT(nid);
				printf("MSC: redrive letter of m%d (e%d) as m%d\n", dl[x].src, dl[x].pay, nid);
				if
				:: CLISTOP -> nclicrash++; rdone = 1    /* sent, not deleted */
				:: skip -> dlq_delete(x); check_not_lost()
				fi
			fi; SCRATCH0
		}
	od;
	skip
}
