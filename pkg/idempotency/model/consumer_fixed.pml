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
	byte cached;                /* the environment's cache (idempotency.cache): event ids seen committed */
	SCRATCH_DECL;
	bit hfull, started, first1;

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
			CP;
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
			/* Delivery.First: received once, not redriven, not held by the backstop */
			first1 = (r == 1 && o == m && !HAS(bheld, bi)); SCRATCH0
		};
		if :: HAS(gfail, g) -> goto msg_done :: else fi;   /* Skipped: an earlier one failed */

		/* Step 2, decoding.handle: the decoder refuses an undecodable body: hold by message */
		if :: kind[p] == K_UNDEC -> w = W_UNDEC; goto hold_noev :: else fi;

		/* Step 3, Consumer.answerRedelivery (new): a delivery that is not a first delivery
		 * reads its record before its handler (one consistent BatchGetItem of the record, the
		 * discarded copy and, past MaxAttempts receives, the attempts item): a decided event is
		 * answered (step 8); another payload's record is a conflict; a message at its limit of
		 * failures goes to hold and dead-letter without running its handler. */
		if
		:: !first1 && BREAK != 2 ->
			CP;
			d_step {
				if
				:: DECIDED(e, p) -> v = 1
				:: !DECIDED(e, p) && recp[e] != 0 -> v = 2
				:: !DECIDED(e, p) && recp[e] == 0 && r > MAXATT && attm[e] == m && attn[e] >= MAXATT -> v = 3
				:: else -> v = 0
				fi; SCRATCH0
			};
			if
			:: v == 1 -> printf("MSC: m%d: e%d decided already: answered\n", m, p); goto answered
			:: v == 2 -> w = W_CONFL; goto hold_ev
			:: v == 3 -> w = W_FAILED; goto hold_ev
			:: else
			fi
		:: !first1 && BREAK == 2 && r > MAXATT ->      /* today's decoding.exhausted alone */
			CP;
			if :: attm[e] == m && attn[e] >= MAXATT -> w = W_FAILED; goto hold_ev :: else fi
		:: else
		fi;

		/* core.start: the cache answers only a first delivery (it is on no held list) */
		if
		:: first1 && HAS(cached, e) ->
			if
			:: recp[e] == p -> printf("MSC: m%d: e%d duplicate (cache)\n", m, p); ACK
			:: else -> w = W_CONFL; goto hold_ev
			fi
		:: skip     /* another environment, or evicted */
		fi;

		/* Step 4, Handler.Decide (never for a redelivery of an event decided before it came) */
		d_step { find_msg(m); check_no_alarm(q[mi].old && !first1); SCRATCH0 };
		if
		:: kind[p] == K_CRASH && !fixed[p] -> printf("MSC: e%d crashes the function\n", p); goto crashed
		:: kind[p] == K_FAIL && !fixed[p] -> goto count_fail
		:: kind[p] == K_MALF || (kind[p] == K_LATE && deployed) -> w = W_MALF; goto hold_ev
		:: else
		fi;

		/* Step 5, Consumer.commit (the fast path, unchanged): TransactWriteItems(effect,
		 * record IF attribute_not_exists(pk) OR expiresAt < :now, ConditionCheck hold IF
		 * attribute_not_exists(pk) OR heldCount = :zero). A refused hold check (settle: held)
		 * goes through passHold on the hold the cancellation returned: the head (by the id its
		 * message was first sent as) commits again with popWrite; a skipped message commits
		 * again past the hold (ConditionCheck contains(skippedIds, :origin)); any other is held
		 * (step 7). A refused record is a duplicate, or the copy of a discarded conflict's
		 * payload (a GetItem of discardedKey), or a conflict. */
		CP;
		d_step {
			if
			:: recp[e] != 0 && (recp[e] == p || copyp[e] == p) -> v = 1    /* duplicate */
			:: recp[e] != 0 && recp[e] != p && copyp[e] != p -> v = 2       /* conflict */
			:: recp[e] == 0 && h[g].n > 0 && SAME(g, 0, e, o) ->
				recp[e] = p; check_apply(p);
				hold_remove(g, h[g].ev[0], h[g].orig[0]);                 /* popWrite */
				v = 0
			:: recp[e] == 0 && h[g].n > 0 && !SAME(g, 0, e, o) && SKIPPED(g, o, e, p) ->
				recp[e] = p; check_apply(p); v = 0;                      /* past the hold */
				hold_remove(g, e, o)                                    /* (the backstop's entry) */
			:: recp[e] == 0 && h[g].n > 0 && !SAME(g, 0, e, o) && !SKIPPED(g, o, e, p) ->
				v = 3                                                   /* held */
			:: recp[e] == 0 && h[g].n == 0 ->
				recp[e] = p; check_apply(p); v = 0
			fi; SCRATCH0
		};
		if
		:: v == 0 -> printf("MSC: m%d: e%d applied\n", m, p); cached = cached | BIT(e); ACK
		:: v == 1 -> printf("MSC: m%d: e%d duplicate\n", m, p); cached = cached | BIT(e); goto answered
		:: v == 2 -> printf("MSC: m%d: e%d conflict\n", m, p); w = W_CONFL; goto hold_ev
		:: v == 3 -> printf("MSC: m%d: e%d held\n", m, p); w = W_HELD; goto hold_ev
		fi;

count_fail:
		/* Step 6, Session.count: Consumer.CountMessageFailure (an UpdateItem); permanent at
		 * MaxAttempts (unchanged) */
		CP;
		d_step {
			if
			:: attm[e] == m -> if :: attn[e] < MAXATT -> attn[e]++ :: else fi
			:: else -> attm[e] = m; attn[e] = 1
			fi;
			v = attn[e]; SCRATCH0
		};
		printf("MSC: m%d: e%d failed (%d)\n", m, p, v);
		if :: v >= MAXATT -> w = W_FAILED; goto hold_ev :: else -> FAILG fi;

hold_ev:
		/* Step 7, core.HoldGroup (one write): TransactWriteItems(ConditionCheck record IF
		 * attribute_not_exists(pk) OR expiresAt < :now OR payloadHash <> :hash, ConditionCheck
		 * discardedKey IF attribute_not_exists(pk) OR payloadHash <> :hash, Put hold IF version
		 * = :v (attribute_not_exists(pk) when new)) adding the message at the end unless it is
		 * listed or skipped. A refused record check is a decided event: answered (step 8); a
		 * skipped message is dead-lettered without holding (its letter rejoins after the tail). */
		CP;
#if BREAK == 1
		if :: DECIDED(e, p) -> goto answered :: else fi;   /* a read ... */
		CP;                                                  /* ... then a write */
		d_step { hold_add(g, e, o, p); v = 0; SCRATCH0 };
#else
		d_step {
			if
			:: DECIDED(e, p) -> v = 1
			:: !DECIDED(e, p) && SKIPPED(g, o, e, p) -> hold_remove(g, e, o); v = 0  /* holds nothing */
			:: else -> hold_add(g, e, o, p); v = 0
			fi; SCRATCH0
		};
#endif
		if
		:: v == 1 -> printf("MSC: m%d: HoldGroup: e%d decided already: answered\n", m, p); goto answered
		:: else -> printf("MSC: m%d: HoldGroup holds group %d behind e%d (unless skipped)\n", m, g, p); goto send_dl
		fi;

hold_noev:
		/* Step 7 without an event id: the hold's Put alone */
		CP;
		d_step { hold_add(g, 0, o, p); SCRATCH0 };

send_dl:
		/* deadletter.Queue.DeadLetter: SendMessage, deduplicated on the message id */
		CP;
		atomic {
			find_msg(m); check_no_alarm(q[mi].old && kind[p] != K_UNDEC);   /* no id: nothing to answer it by */
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

answered:
		/* Step 8, core.leaveHold (was releasedAfter): a delivery answered without a commit of
		 * its own (a duplicate, a decided event) takes its message off the held list wherever it
		 * is: a GetItem of the hold and a conditional Put (by the id it was first sent as). A
		 * first delivery is on no list: no call. */
		if
		:: first1 ->
			d_step { hold_lists(g, o); assert(!found); SCRATCH0 };
			ACK
		:: !first1 && BREAK != 5 ->
			CP;
			d_step { hold_remove(g, e, o); SCRATCH0 };
			ACK
		:: !first1 && BREAK == 5 -> ACK
		fi;

msg_done:
		atomic { bi++; m = 0; p = 0; o = 0; r = 0; g = 0; e = 0; v = 0; w = 0; hfull = 0; first1 = 0; SCRATCH0 }
	:: else -> break
	od;

	CP;
	d_step { batch_end(); SCRATCH0 };
	goto end_recv;

crashed:
	printf("MSC: consumer crashes\n");
	d_step { batch_crash(); SCRATCH0 };
	goto end_recv
}
