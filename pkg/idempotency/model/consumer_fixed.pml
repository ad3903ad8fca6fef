/*
 * consumer_fixed.pml: one consumer (sqsbatch.NewFor over an idempotency.Consumer, HoldGroup)
 * as the code must have it after issue 26. Each labelled step names the Go function it stands
 * for (docs/recovery-model.md, "The protocol"); CP between two steps is a crash point.
 */

#include "receive.pml"

proctype Consumer() {
	byte bm[BATCH];             /* the batch's message ids, in the queue's order */
	byte bn, bi, m, p, o, r, g, e, v;
	mtype w;
	byte ackm, bheld, gfail;    /* per batch index: acknowledged, held by the backstop; per group: failed */
	byte cached;                /* the environment's cache (engine.cache): event ids seen committed */
	SCRATCH_DECL;
	bit hfull, started, redel, recov, stale;

end_recv:
	atomic { qn > 0 -> sqs_receive(); say_batch(); SCRATCH0 };
	if :: bn == 0 -> goto end_recv :: else fi;

	/* Step 1, sqsbatch decoding.backstop (unchanged but for skips): per group, from its first
	 * message on its last BACKSTOP receives, every message of the group in the batch is held
	 * by the id it was first sent as, in one conditional write (Consumer.HoldMessages); a
	 * message listed keeps its place, a message skipped is not listed again. */
	v = 0;
	do
	:: v < NG ->
		d_step {
			started = 0; bi = 0;
			do
			:: bi < bn ->
				find_msg(bm[bi]);
				if
				:: grp[q[mi].pay] == v && (started || q[mi].rc > MRC - BACKSTOP) ->
					started = 1; bheld = bheld | BIT(bi)
				:: else
				fi;
				bi++
			:: else -> break
			od; SCRATCH0
		};
		if
		:: started ->
			CP(1);
			printf("MSC: backstop holds group %d\n", v);
			d_step {
				bi = 0;
				do
				:: bi < bn ->
					find_msg(bm[bi]);
					if
					:: HAS(bheld, bi) && grp[q[mi].pay] == v -> hold_add(v, 0, q[mi].orig, q[mi].pay)
					:: else
					fi;
					bi++
				:: else -> break
				od;
				bi = 0; SCRATCH0
			}
		:: else
		fi;
		v++
	:: else -> break
	od;

	/* batch.Runner.run: each group in order, stopping at its first failure */
	bi = 0;
	do
	:: bi < bn ->
		d_step {
			find_msg(bm[bi]); m = bm[bi]; p = q[mi].pay; o = q[mi].orig; r = q[mi].rc; g = grp[p]; e = eid[p];
			/* Delivery.redelivered: received before, or redriven (Origin); core.mayBeListed:
			 * held by the backstop (HoldWritten), or redelivered (a backstop may have listed it
			 * in an earlier batch, behind a group-mate on its last receives): its group's hold
			 * may list it */
			redel = (r > 1 || o != m); recov = (HAS(bheld, bi) || redel); SCRATCH0
		};
		if :: HAS(gfail, g) -> goto msg_done :: else fi;   /* Skipped: an earlier one failed */

		/* S2, decoding.handle: an undecodable body (or a payload error): Batch.Fail with no
		 * event, HoldGroup by message id only, no record check */
		if :: kind[p] == K_UNDEC -> w = W_UNDEC; goto hold_noev :: else fi;

		/* S3, Batch.Apply (exhausted): received more than MaxAttempts times: a consistent GetItem of
		 * the attempts item; at the limit, S7 without running the handler */
		if
		:: r > MAXATT ->
			CP(2);
			if :: attm[e] == m && attn[e] >= MAXATT -> w = W_FAILED; goto hold_ev :: else fi
		:: else
		fi;

		/* S4, core.start: the cache answers unless the delivery may be listed (its commit, or its
		 * answer from its record, must take it off the hold) */
		if
		:: !recov && HAS(cached, e) ->
			if
			:: recp[e] == p -> printf("MSC: m%d: e%d duplicate (cache)\n", m, p); ACK
			:: else -> w = W_CONFL; goto hold_ev
			fi
		:: skip     /* another environment, or evicted */
		fi;

		/* S5, core.answered: a redelivery reads its record before its handler (an eventually
		 * consistent GetItem: it may miss a record written lately, while the budget STALE
		 * lasts). Decided with this payload: Duplicate, acknowledged, and core.leave when the
		 * delivery may be listed; a live record of another payload: Conflict, S7. (BREAK=2
		 * removes this step.) */
		if
		:: redel && BREAK != 2 ->
			CP(3);
			if
			:: nstale < STALE && recp[e] != 0 -> nstale++; stale = 1;
				printf("MSC: m%d: the record read of e%d is stale\n", m, p)
			:: else ->
				if
				:: recp[e] == p ->
					printf("MSC: m%d: e%d decided already: answered\n", m, p);
					if :: recov -> goto leave :: else -> ACK fi
				:: recp[e] != 0 && recp[e] != p -> w = W_CONFL; goto hold_ev
				:: else
				fi
			fi
		:: !redel && !recov -> d_step { hold_lists(g, o); assert(!found); SCRATCH0 }   /* a first delivery is on no held list */
		:: else
		fi;

		/* Step 4, Handler.Decide: never for a redelivery of an event decided before it came,
		 * unless the read of S5 was stale */
		d_step { find_msg(m); check_no_alarm(q[mi].old && redel && !stale); SCRATCH0 };
		if
		:: kind[p] == K_CRASH && !fixed[p] -> printf("MSC: e%d crashes the function\n", p); goto crashed
		:: kind[p] == K_FAIL && !fixed[p] -> goto count_fail
		:: kind[p] == K_MALF || (kind[p] == K_LATE && deployed) -> w = W_MALF; goto hold_ev
		:: else
		fi;

		/* S8, Consumer.commit: TransactWriteItems(effect, Put record IF attribute_not_exists(pk)
		 * OR expiresAt < :now, ConditionCheck hold IF attribute_not_exists(pk) OR size(held) =
		 * :none). A refused record: a Duplicate of this payload (core.leave from the returned
		 * hold if the hold check failed too), else a Conflict (S7). A refused hold check: S9,
		 * passHold, on the hold as returned (each write conditional on its version, so taken
		 * as one step with the commit it returns): the head (holdlist.Same) commits with popWrite,
		 * which takes every other entry of the committing message off too (a re-send's); a
		 * skipped message commits past the hold (pastHoldWrite: a version check, or the hold
		 * without its entries); any other joins the end, in one transaction with the record
		 * check (refused: Duplicate), a HeldError, dead-lettered (S10). */
		CP(4);
		d_step {
			if
			:: recp[e] == p && h[g].n == 0 -> v = 1                         /* duplicate */
			:: recp[e] == p && h[g].n > 0 -> v = 4                          /* duplicate, held */
			:: recp[e] != 0 && recp[e] != p -> v = 2                        /* conflict */
			:: recp[e] == 0 && h[g].n > 0 && SAME(g, 0, e, o, p) ->
				recp[e] = p; check_apply(p);
				hold_drop(g, 0); hold_remove(g, e, o, p);                   /* popWrite */
				v = 0
			:: recp[e] == 0 && h[g].n > 0 && !SAME(g, 0, e, o, p) && SKIPPED(g, o, e, p) ->
				recp[e] = p; check_apply(p); hold_remove(g, e, o, p); v = 0 /* pastHoldWrite */
			:: recp[e] == 0 && h[g].n > 0 && !SAME(g, 0, e, o, p) && !SKIPPED(g, o, e, p) ->
				hold_add(g, e, o, p); v = 3                                 /* joined: HeldError */
			:: recp[e] == 0 && h[g].n == 0 ->
				recp[e] = p; check_apply(p); v = 0
			fi; SCRATCH0
		};
		if
		:: v == 0 -> printf("MSC: m%d: e%d applied\n", m, p); cached = cached | BIT(e); ACK
		:: v == 1 -> printf("MSC: m%d: e%d duplicate\n", m, p); cached = cached | BIT(e); ACK
		:: v == 4 -> printf("MSC: m%d: e%d duplicate (held)\n", m, p); cached = cached | BIT(e); goto leave
		:: v == 2 -> printf("MSC: m%d: e%d conflict\n", m, p); w = W_CONFL; goto hold_ev
		:: v == 3 -> printf("MSC: m%d: e%d held (joins the hold)\n", m, p); w = W_HELD; goto send_dl
		fi;

count_fail:
		/* S6, Batch.Apply (count), CountMessageFailure: one TransactWriteItems: the record check and
		 * the attempts item's Update (counting this message's failures; retried on a refusal
		 * of its own condition, so one step here). A refused record check: DecidedError,
		 * core.leave if it may be listed, acknowledged. At MaxAttempts: S7. */
		CP(5);
		d_step {
			if
			:: DECIDED(e, p) -> v = 0
			:: else ->
				if
				:: attm[e] == m -> if :: attn[e] < MAXATT -> attn[e]++ :: else fi
				:: else -> attm[e] = m; attn[e] = 1
				fi;
				v = attn[e]
			fi; SCRATCH0
		};
		if
		:: v == 0 -> printf("MSC: m%d: count: e%d decided already: answered\n", m, p);
			if :: recov -> goto leave :: else -> ACK fi
		:: else
		fi;
		printf("MSC: m%d: e%d failed (%d)\n", m, p, v);
		if :: v >= MAXATT -> w = W_FAILED; goto hold_ev :: else -> FAILG fi;

hold_ev:
		/* S7, Batch.Fail, core.HoldGroup: one TransactWriteItems(ConditionCheck record IF not
		 * decided, Put hold IF attribute_not_exists(pk) or version = :v, its pages), adding the
		 * message at the end unless it is listed (it learns its event id and hash) or skipped,
		 * with the check of table.MessageKey too (an operator's discard of this very message: a
		 * conflict's). A refused record check: core.leave from the hold the refusal returned, ErrDecided,
		 * acknowledged, nothing dead-lettered (BREAK=1: a read of the record, then the write);
		 * skipped: ErrSkipped, its entries taken off the list (the backstop's of a re-send),
		 * dead-lettered unheld, with that reason. */
		CP(6);
#if BREAK == 1
		if :: DECIDED(e, p) || HAS(mdec, o) -> goto leave :: else fi;   /* a read ... */
		CP(7);                                               /* ... then a write */
		d_step { hold_add(g, e, o, p); v = 0; SCRATCH0 };
#else
		d_step {
			if
			:: DECIDED(e, p) || HAS(mdec, o) -> v = 1
			:: else -> if :: SKIPPED(g, o, e, p) -> hold_remove(g, e, o, p) :: else -> hold_add(g, e, o, p) fi; v = 0
			fi; SCRATCH0
		};
#endif
		if
		:: v == 1 -> printf("MSC: m%d: HoldGroup: e%d decided already: answered\n", m, p); goto leave
		:: else -> printf("MSC: m%d: HoldGroup holds group %d behind e%d (unless skipped)\n", m, g, p); goto send_dl
		fi;

hold_noev:
		/* S2's HoldGroup without an event id: the hold's write with the check that no operator
		 * discarded this message (undecidedMessageCheck on table.MessageKey); refused: answered */
		CP(8);
		d_step { if :: HAS(mdec, o) -> v = 1 :: SKIPPED(g, o, 0, p) -> hold_remove(g, 0, o, p); v = 0 :: else -> hold_add(g, 0, o, p); v = 0 fi; SCRATCH0 };
		if
		:: v == 1 -> printf("MSC: m%d: HoldGroup: message m%d discarded already: answered\n", m, o); e = 0; goto leave
		:: else
		fi;

send_dl:
		/* S10, deadletter.Queue.DeadLetter: SendMessage, deduplicated on the message id */
		CP(9);
		atomic {
			find_msg(m); check_no_alarm(q[mi].old);
			if
			:: HAS(dlsent, m) ->
				if
				:: !DLQDROP -> dlq_append(p, o, m, w)
				:: printf("MSC: letter of m%d dropped (deduplication window)\n", m)
				fi
			:: else -> dlq_append(p, o, m, w)
			fi;
			dlsent = dlsent | BIT(m); SCRATCH0
		};
		ACK;

leave:
		/* core.leave (and releasedAfter): an event answered without a commit of its own takes
		 * its message off the held list wherever it is (holdlist.Same), a conditional write only
		 * when it is listed; a failed write fails the message. (BREAK=5 removes it.) */
		if
		:: BREAK != 5 ->
			CP(10);
			d_step { hold_remove(g, e, o, p); SCRATCH0 };
			ACK
		:: else -> ACK
		fi;

msg_done:
		atomic { bi++; m = 0; p = 0; o = 0; r = 0; g = 0; e = 0; v = 0; w = 0; hfull = 0; redel = 0; recov = 0; stale = 0; SCRATCH0 }
	:: else -> break
	od;

	CP(11);
	d_step { batch_end(); SCRATCH0 };
	goto end_recv;

crashed:
	printf("MSC: consumer crashes\n");
	d_step { batch_crash(); SCRATCH0 };
	goto end_recv
}
