/*
 * consumer_fixed.pml: one consumer (sqsbatch.NewFor over an idempotency.Consumer, HoldGroup).
 * Each step names the Go function it stands for (docs/recovery-model.md, "The protocol").
 *
 * One step of the model is one call the consumer makes to SQS or DynamoDB (or its handler, while
 * the handler's outcome can still change), together with the computation the code does in
 * memory before the next call: the loop below runs the call named by nxt, then the consumer's
 * own computation up to its next call, all in one atomic step. Nothing another process reads
 * or writes changes between two calls (docs/recovery-model.md, "How the model is kept small"),
 * so the other processes interleave with the consumer exactly at its calls. CP(n), just before
 * call n, is a crash point: the function may die there instead of making the call.
 */

#include "receive.pml"

/* The consumer's calls, the values of nxt. */
#define C_RECV     0    /* ReceiveMessage (the event source mapping) */
#define C_BACKSTOP 1    /* S1, HoldMessages for group v */
#define C_READ     2    /* S5, core.answered's GetItem of the record */
#define C_HANDLER  3    /* Handler.Decide, while its outcome may still change */
#define C_COMMIT   4    /* S8, Consumer.commit */
#define C_COUNT    5    /* S6, CountMessageFailure */
#define C_HOLD     6    /* S7, HoldGroup (BREAK=1: its read) */
#define C_HOLDW    7    /* BREAK=1: HoldGroup's write after its read */
#define C_HOLDNOEV 8    /* S2, HoldGroup by message id */
#define C_SEND     9    /* S10, deadletter.Queue.DeadLetter */
#define C_LEAVE    10   /* core.leave */
#define C_END      11   /* the partial batch response */
#define C_NOTE     12   /* S11, the note that the message's letter was sent */

/* The next call is n: the atomic step ends here (the loop runs call n next time). */
#define CALL(n) nxt = n; goto called

/* core.leave is the next call (BREAK=5 removes it: the message is acknowledged as it is). */
#if BREAK == 5
#define LEAVE goto ack
#else
#define LEAVE CALL(C_LEAVE)
#endif

proctype Consumer() {
	byte bn, bi, p, r, g, e, v, nxt;
	mtype w;
	byte ackm, bheld, gfail;    /* per batch index: acknowledged, held by the backstop; per group: failed */
	byte cached;                /* the environment's cache (engine.cache): event ids seen committed */
	SCRATCH_DECL;
	bit started, redel, recov, stale;

end_recv:
	do
	:: atomic {
		if
		:: nxt == C_RECV && (qn > 0 || !PRODUCED) ->
			/* the producer's sends up to now (producer.pml), then the receive */
			produce(1); d_step { SCRATCH0 };
			sqs_receive(); skip; d_step { say_batch(); SCRATCH0 };
			if :: bn == 0 -> CALL(C_RECV) :: else fi;     /* every message moved by the queue */
			v = 0; goto backstop

		:: nxt == C_BACKSTOP ->
			/* S1, sqsbatch decoding.backstop → Consumer.HoldMessages → changeHold: every
			 * message of group v in the batch from its first one on its last BACKSTOP receives
			 * (marked in bheld) is held by the id it was first sent as, in one conditional
			 * write; a message listed keeps its place, a message skipped is not listed again. */
			CP(1);
			printf("MSC: backstop holds group %d\n", v);
			d_step {
				bi = 0;
				do
				:: bi < bn ->
					find_msg(cbm[bi]);
					if
					:: HAS(bheld, bi) && grp[q[mi].pay] == v -> hold_add(v, 0, q[mi].orig, q[mi].pay)
					:: else
					fi;
					bi++
				:: else -> break
				od;
				bi = 0; SCRATCH0
			};
			v++; goto backstop

		:: nxt == C_READ ->
			/* S5, core.answered: a redelivery reads its record before its handler (an eventually
			 * consistent GetItem: it may miss a record written lately, while the budget STALE
			 * lasts). Decided with this payload: Duplicate, acknowledged, and core.leave when the
			 * delivery may be listed; a live record of another payload: Conflict, S7. */
			CP(3);
			if
			:: nstale < STALE && recp[e] != 0 -> nstale++; stale = 1;
				printf("MSC: m%d: the record read of e%d is stale\n", cm, p)
			:: else ->
				if
				:: recp[e] == p ->
					printf("MSC: m%d: e%d decided already: answered\n", cm, p);
					if :: recov -> LEAVE :: else -> goto ack fi
				:: recp[e] != 0 && recp[e] != p -> w = W_CONFL; CALL(C_HOLD)
				:: else
				fi
			fi;
			goto decide

		:: nxt == C_HANDLER ->
			/* Handler.Decide, when its outcome depended on a cause not fixed yet (or a deploy
			 * not made yet) as the consumer came to it: it runs now, on the world as it is */
			goto outcome

		:: nxt == C_COMMIT ->
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
				:: recp[e] == 0 && h[g].n > 0 && SAME(g, 0, e, co, p) ->
					recp[e] = p; check_apply(p);
					hold_drop(g, 0); hold_remove(g, e, co, p);                   /* popWrite */
					v = 0
				:: recp[e] == 0 && h[g].n > 0 && !SAME(g, 0, e, co, p) && SKIPPED(g, co, e, p) ->
					recp[e] = p; check_apply(p); hold_remove(g, e, co, p); v = 0 /* pastHoldWrite */
				:: recp[e] == 0 && h[g].n > 0 && !SAME(g, 0, e, co, p) && !SKIPPED(g, co, e, p) ->
					hold_add(g, e, co, p); v = 3                                 /* joined: HeldError */
				:: recp[e] == 0 && h[g].n == 0 ->
					recp[e] = p; check_apply(p); v = 0
				fi; SCRATCH0
			};
			if
			:: v == 0 -> printf("MSC: m%d: e%d applied\n", cm, p); cached = cached | BIT(e); goto ack
			:: v == 1 -> printf("MSC: m%d: e%d duplicate\n", cm, p); cached = cached | BIT(e); goto ack
			:: v == 4 -> printf("MSC: m%d: e%d duplicate (held)\n", cm, p); cached = cached | BIT(e); LEAVE
			:: v == 2 -> printf("MSC: m%d: e%d conflict\n", cm, p); w = W_CONFL; CALL(C_HOLD)
			:: v == 3 -> printf("MSC: m%d: e%d held (joins the hold)\n", cm, p); w = W_HELD; CALL(C_SEND)
			fi

		:: nxt == C_COUNT ->
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
					:: attm[e] == cm -> if :: attn[e] < MAXATT -> attn[e]++ :: else fi
					:: else -> attm[e] = cm; attn[e] = 1
					fi;
					v = attn[e]
				fi; SCRATCH0
			};
			if
			:: v == 0 -> printf("MSC: m%d: count: e%d decided already: answered\n", cm, p);
				if :: recov -> LEAVE :: else -> goto ack fi
			:: else
			fi;
			printf("MSC: m%d: e%d failed (%d)\n", cm, p, v);
			if :: v >= MAXATT -> w = W_FAILED; CALL(C_HOLD) :: else -> goto failg fi

		:: nxt == C_HOLD ->
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
			if :: DECIDED(e, p) || HAS(mdec, co) -> goto decided :: else -> CALL(C_HOLDW) fi   /* a read ... */
#else
			d_step {
				if
				:: DECIDED(e, p) || HAS(mdec, co) -> v = 1
				:: else -> if :: SKIPPED(g, co, e, p) -> hold_remove(g, e, co, p) :: else -> hold_add(g, e, co, p) fi; v = 0
				fi; SCRATCH0
			};
			if :: v == 1 -> goto decided :: else -> goto held fi
#endif

		:: nxt == C_HOLDW ->
			CP(7);                                               /* ... then a write (BREAK=1) */
			d_step { hold_add(g, e, co, p); v = 0; SCRATCH0 };
			goto held

		:: nxt == C_HOLDNOEV ->
			/* S2's HoldGroup without an event id: the hold's write with the check that no operator
			 * discarded this message (undecidedMessageCheck on table.MessageKey); refused: answered */
			CP(8);
			d_step { if :: HAS(mdec, co) -> v = 1 :: SKIPPED(g, co, 0, p) -> hold_remove(g, 0, co, p); v = 0 :: else -> hold_add(g, 0, co, p); v = 0 fi; SCRATCH0 };
			if
			:: v == 1 -> printf("MSC: m%d: HoldGroup: message m%d discarded already: answered\n", cm, co); e = 0; LEAVE
			:: else -> printf("MSC: m%d: HoldGroup holds group %d (unless skipped)\n", cm, g); CALL(C_SEND)
			fi

		:: nxt == C_SEND ->
			/* S10, core.DeadLetterOnce then deadletter.Queue.DeadLetter: a consistent read of the
			 * note of this message's letter (S11); noted, the letter was sent already (its batch
			 * crashed after the send): nothing is sent, the message is acknowledged. Only this
			 * consumer writes the note, after the send, so the read and the send are one step.
			 * Else SendMessage, deduplicated on the message id. */
			CP(9);
			if
			:: HAS(lset, cm) -> printf("MSC: m%d: its letter was sent already\n", cm); goto ack
			:: else
			fi;
			d_step { find_msg(cm); check_no_alarm(q[mi].old); SCRATCH0 };
			if
			:: !HAS(dlsent, cm) || !DLQDROP -> d_step { dlq_append(p, co, cm, w); dlsent = dlsent | BIT(cm); SCRATCH0 }
			:: HAS(dlsent, cm) -> printf("MSC: letter of m%d dropped (deduplication window)\n", cm)
			fi;
			CALL(C_NOTE)

		:: nxt == C_NOTE ->
			/* S11, core.DeadLetterOnce's PutItem of table.LetterKey: the note that this message's
			 * letter was sent, so that a delivery of it again sends no second letter */
			CP(12);
			d_step { lset = lset | BIT(cm); SCRATCH0 };
			goto ack

		:: nxt == C_LEAVE ->
			/* core.leave (and releasedAfter): an event answered without a commit of its own takes
			 * its message off the held list wherever it is (holdlist.Same), a conditional write only
			 * when it is listed; a failed write fails the message. (BREAK=5 removes it: LEAVE.) */
			CP(10);
			d_step { hold_remove(g, e, co, p); SCRATCH0 };
			goto ack

		:: nxt == C_END ->
			/* the partial batch response: acknowledged messages deleted, the others visible again */
			CP(11);
			d_step { batch_end(); SCRATCH0 };
			CALL(C_RECV)
		fi;

		/* ---- what the consumer computes in memory between two calls ---- */

backstop: skip;
		/* S1's choice: from group v on, the next group with a message on its last BACKSTOP
		 * receives; it and the group's later messages in the batch are marked in bheld (the
		 * write is the call C_BACKSTOP) */
		d_step {
			started = 0;
			do
			:: v < NG && !started ->
				bi = 0;
				do
				:: bi < bn ->
					find_msg(cbm[bi]);
					if
					:: grp[q[mi].pay] == v && (started || q[mi].rc > MRC - BACKSTOP) ->
						started = 1; bheld = bheld | BIT(bi)
					:: else
					fi;
					bi++
				:: else -> break
				od;
				if :: !started -> v++ :: else fi
			:: else -> break
			od;
			bi = 0; SCRATCH0
		};
		if :: started -> started = 0; CALL(C_BACKSTOP) :: else -> v = 0 fi;

next:
		/* batch.Runner.run: each group in order, stopping at its first failure */
		if :: bi >= bn -> CALL(C_END) :: else fi;
		/* Delivery.redelivered: received before, or redriven (Origin); core.mayBeListed:
		 * held by the backstop (HoldWritten), or redelivered (a backstop may have listed it
		 * in an earlier batch, behind a group-mate on its last receives): its group's hold
		 * may list it */
		d_step {
			find_msg(cbm[bi]); cm = cbm[bi]; p = q[mi].pay; co = q[mi].orig; r = q[mi].rc; g = grp[p]; e = eid[p];
			redel = (r > 1 || co != cm); recov = (HAS(bheld, bi) || redel); SCRATCH0
		};
		if :: HAS(gfail, g) -> goto done :: else fi;   /* Skipped: an earlier one failed */

		/* S2, decoding.handle: an undecodable body (or a payload error): Batch.Fail with no
		 * event, HoldGroup by message id only, no record check */
		if :: kind[p] == K_UNDEC -> w = W_UNDEC; CALL(C_HOLDNOEV) :: else fi;

		/* S3, Batch.Apply (exhausted): received more than MaxAttempts times: a consistent GetItem of
		 * the attempts item; at the limit, S7 without running the handler. Only this consumer
		 * writes the attempts items, so the read is made here, in memory's step. */
		if
		:: r > MAXATT ->
			CP(2);
			if :: attm[e] == cm && attn[e] >= MAXATT -> w = W_FAILED; CALL(C_HOLD) :: else fi
		:: else
		fi;

		/* S4, core.start: the cache answers unless the delivery may be listed (its commit, or its
		 * answer from its record, must take it off the hold); a record, once written, never
		 * changes, so what the cache holds is the record */
		if
		:: !recov && HAS(cached, e) ->
			if
			:: recp[e] == p -> printf("MSC: m%d: e%d duplicate (cache)\n", cm, p); goto ack
			:: else -> w = W_CONFL; CALL(C_HOLD)
			fi
		:: skip     /* another environment, or evicted */
		fi;

		/* S5 (the call C_READ) for a redelivery (BREAK=2 removes it) */
		if
		:: redel && BREAK != 2 -> CALL(C_READ)
		:: !redel && !recov -> d_step { hold_lists(g, co); assert(!found); SCRATCH0 }   /* a first delivery is on no held list */
		:: else
		fi;

decide: skip;
		/* Handler.Decide: never for a redelivery of an event decided before it came, unless the
		 * read of S5 was stale. Its outcome depends on the world only while a cause is not fixed
		 * (K_FAIL, K_CRASH) or a deploy not made (K_LATE): then it is a step of its own
		 * (C_HANDLER); otherwise it can no longer change, and is computed here. */
		d_step { find_msg(cm); check_no_alarm(q[mi].old && redel && !stale); SCRATCH0 };
		if
		:: ((kind[p] == K_CRASH || kind[p] == K_FAIL) && !fixed[p]) || (kind[p] == K_LATE && DEPLOYS && !deployed) -> CALL(C_HANDLER)
		:: else
		fi;

outcome:
		if
		:: kind[p] == K_CRASH && !fixed[p] -> printf("MSC: e%d crashes the function\n", p); goto crashed
		:: kind[p] == K_FAIL && !fixed[p] -> CALL(C_COUNT)
		:: kind[p] == K_MALF || (kind[p] == K_LATE && deployed) -> w = W_MALF; CALL(C_HOLD)
		:: else -> CALL(C_COMMIT)
		fi;

decided:
		printf("MSC: m%d: HoldGroup: e%d decided already: answered\n", cm, p); LEAVE;

held:
		printf("MSC: m%d: HoldGroup holds group %d behind e%d (unless skipped)\n", cm, g, p); CALL(C_SEND);

failg:
		gfail = gfail | BIT(g); goto done;     /* the rest of its group in the batch fails with it */

ack:
		ackm = ackm | BIT(bi);

done: skip;
		d_step { bi++; cm = 0; p = 0; co = 0; r = 0; g = 0; e = 0; v = 0; w = 0; redel = 0; recov = 0; stale = 0; SCRATCH0 };
		goto next;

crashed: skip;
		printf("MSC: consumer crashes\n");
		d_step { batch_crash(); SCRATCH0 };
		CALL(C_RECV);

called:
		CANON
	}
	od
}
