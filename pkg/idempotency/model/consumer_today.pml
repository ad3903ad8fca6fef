/*
 * consumer_today.pml: one consumer (sqsbatch.NewFor over an idempotency.Consumer, HoldGroup)
 * as the code has it today. Each labelled step names the Go function it stands for; CP between
 * two steps is a crash point.
 */

#include "receive.pml"

proctype Consumer() {
	byte bm[BATCH];             /* the batch's message ids, in the queue's order */
	byte bn, bi, m, p, o, r, g, e, v;
	mtype w;
	byte ackm, bheld, gfail;    /* per batch index: acknowledged, held by the backstop; per group: failed */
	byte cached;                /* the environment's cache (engine.cache): event ids seen committed */
	SCRATCH_DECL;
	bit hfull, started;

end_recv:
	atomic { qn > 0 -> sqs_receive(); say_batch(); SCRATCH0 };
	if :: bn == 0 -> goto end_recv :: else fi;

	/* sqsbatch decoding.backstop (Processor.Handle, before the batch runs): per group, from
	 * its first message on its last BACKSTOP receives, every message of the group in the
	 * batch is held by the id it was first sent as, in one write (Consumer.HoldMessages). A
	 * hold too large for its item is logged and the messages handled as usual. */
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
				/* Hold.add of each, all in one PutItem: refused whole past the item size */
				k = 0; bi = 0;
				do
				:: bi < bn ->
					find_msg(bm[bi]);
					if
					:: HAS(bheld, bi) && grp[q[mi].pay] == v ->
						j = 0; found = 0;
						do
						:: j < h[v].n -> if :: SAME(v, j, 0, q[mi].orig) -> found = 1 :: else fi; j++
						:: else -> break
						od;
						if :: !found -> k++ :: else fi
					:: else
					fi;
					bi++
				:: else -> break
				od;
				if
				:: h[v].n + k <= HCAP ->
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
					od
				:: else                     /* ErrHoldFull: logged, the messages handled */
				fi;
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
		d_step { find_msg(bm[bi]); m = bm[bi]; p = q[mi].pay; o = q[mi].orig; r = q[mi].rc; g = grp[p]; e = eid[p]; SCRATCH0 };
		if :: HAS(gfail, g) -> goto msg_done :: else fi;   /* Skipped: an earlier one failed */

		/* sqsbatch decoding.handle: the decoder refuses an undecodable body, permanently:
		 * Session.Hold with no event id */
		if :: kind[p] == K_UNDEC -> w = W_UNDEC; goto hold_noev :: else fi;

		/* decoding.exhausted: a message received more than MaxAttempts times reads its count
		 * (Consumer.MessageFailures, a GetItem) and goes to hold and dead-letter at its limit */
		if
		:: r > MAXATT ->
			CP(2);
			if :: attm[e] == m && attn[e] >= MAXATT -> w = W_FAILED; goto hold_ev :: else fi
		:: else
		fi;

		/* core.start: the cache answers a key this environment saw committed, unless the
		 * backstop held the message (Delivery.HoldWritten) */
		if
		:: HAS(cached, e) && !HAS(bheld, bi) ->
			if
			:: recp[e] == p -> printf("MSC: m%d: e%d duplicate (cache)\n", m, p); ACK
			:: else -> w = W_CONFL; goto hold_ev
			fi
		:: skip     /* another environment, or evicted */
		fi;

		/* Handler.Decide */
		if
		:: kind[p] == K_CRASH && !fixed[p] -> printf("MSC: e%d crashes the function\n", p); goto crashed
		:: kind[p] == K_FAIL && !fixed[p] -> goto count_fail
		:: kind[p] == K_MALF || (kind[p] == K_LATE && deployed) ->
			/* core.answerDiscarded: a malformed event an operator discarded is a duplicate
			 * (core.discarded: a GetItem of the record) */
			CP(3);
			if :: recd[e] -> printf("MSC: m%d: malformed e%d, discarded: duplicate\n", m, p); ACK :: else -> w = W_MALF; goto hold_ev fi
		:: else
		fi;

		/* Consumer.commit: TransactWriteItems(effect, record IF attribute_not_exists(pk),
		 * ConditionCheck hold IF attribute_not_exists(pk) OR size(held) = 0), settled by
		 * settle; a refused hold check goes through throughHold/passHold: the head of the list
		 * commits again with popWrite, any other event joins the end (changeHold) */
		CP(4);
		d_step {
			if
			:: recp[e] != 0 && recp[e] == p -> v = 1      /* duplicate */
			:: recp[e] != 0 && recp[e] != p -> v = 2      /* conflict */
			:: recp[e] == 0 && h[g].n > 0 && SAME(g, 0, e, o) ->
				recp[e] = p; check_apply(p);
				hold_remove(g, h[g].ev[0], h[g].orig[0]); /* popWrite: the head off */
				v = 0
			:: recp[e] == 0 && h[g].n > 0 && !SAME(g, 0, e, o) ->
				hold_add(g, e, o, p);
				if :: hfull -> v = 4 :: else -> v = 3 fi   /* HeldError; ErrHoldFull */
			:: recp[e] == 0 && h[g].n == 0 ->
				recp[e] = p; check_apply(p); v = 0
			fi; SCRATCH0
		};
		if
		:: v == 0 -> printf("MSC: m%d: e%d applied\n", m, p); cached = cached | BIT(e); ACK
		:: v == 1 ->
			printf("MSC: m%d: e%d duplicate\n", m, p);
			cached = cached | BIT(e);
			/* core.releasedAfter: a duplicate takes its event off the held list, wherever
			 * it is (changeHold: a GetItem and a conditional PutItem) */
			CP(5);
			d_step { hold_remove(g, e, o); SCRATCH0 };
			ACK
		:: v == 2 -> printf("MSC: m%d: e%d conflict\n", m, p); w = W_CONFL; goto hold_ev
		:: v == 3 -> printf("MSC: m%d: e%d held\n", m, p); w = W_HELD; goto send_dl   /* Session.Hold: nothing for ErrHeld */
		:: v == 4 -> printf("MSC: m%d: e%d not held: ErrHoldFull\n", m, p); goto count_fail
		fi;

count_fail:
		/* Session.count: Consumer.CountMessageFailure (an UpdateItem); permanent at MaxAttempts */
		CP(6);
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
		/* Session.Hold -> core.HoldGroup(group, eventID, OriginID, reason): an event an
		 * operator discarded holds nothing (core.discarded: a GetItem), else changeHold adds
		 * it (a GetItem and a conditional PutItem, retried): a read, then a write */
		CP(7);
		if :: recd[e] -> printf("MSC: m%d: HoldGroup: e%d discarded, holds nothing\n", m, p); goto send_dl :: else fi;
		printf("MSC: m%d: HoldGroup read: e%d not discarded\n", m, p);
		CP(8);
		d_step { hold_add(g, e, o, p); SCRATCH0 };
		if
		:: hfull -> printf("MSC: m%d: HoldGroup: ErrHoldFull, not dead-lettered yet\n", m); FAILG
		:: else -> printf("MSC: m%d: HoldGroup holds group %d behind e%d\n", m, g, p); goto send_dl
		fi;

hold_noev:
		CP(9);
		d_step { hold_add(g, 0, o, p); SCRATCH0 };
		if :: hfull -> FAILG :: else fi;

send_dl:
		/* deadletter.Queue.DeadLetter: SendMessage, deduplicated on the message id */
		CP(10);
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

msg_done:
		atomic { bi++; m = 0; p = 0; o = 0; r = 0; g = 0; e = 0; v = 0; w = 0; hfull = 0; SCRATCH0 }
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
