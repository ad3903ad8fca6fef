/*
 * receive.pml: what the Lambda event source mapping does around the consumer, shared by both
 * protocols: the receive of a batch from the FIFO queue (several messages of one group in a
 * batch), the partial batch response at its end, and a crash. Included inside proctype
 * Consumer; its locals are the consumer's.
 */

/* Message i is received once more (its first receive notes whether its event was decided). */
/* old: its event has a record of this payload (applied, discarded) when it is first received:
 * a decision an answer can be given by (an undecodable body has no id, a discarded conflict's
 * payload only a copy that decides nothing) */
#define RECEIVED(i) if :: q[i].rc == 0 -> q[i].old = (kind[q[i].pay] != K_UNDEC && recp[eid[q[i].pay]] == q[i].pay) :: else fi; q[i].rc++; q[i].flight = 1

/* ReceiveMessage by the event source mapping: per group with a message, a prefix of its
 * messages in order (the group of `first` at least its head), up to BATCH in all, each
 * received once more; a message past MRC receives is moved to the dead-letter queue by SQS
 * instead (a head at once, one behind its head when the batch reaches it). */
inline sqs_receive() {
	d_step {
		sqs_move_exhausted();
		bn = 0; closed = 0; took = 0;
		j = 0; x = 0;
		do
		:: j < qn -> x = x | BIT(grp[q[j].pay]); j++
		:: else -> break
		od
	};
	if
	:: qn > 0 ->
		if
		:: HAS(x, 0) -> first = 0
		:: HAS(x, 1) -> first = 1
		fi;
		i = 0;
		do
		:: i < qn ->
			g = grp[q[i].pay];
			if
			:: HAS(closed, g) -> i++
			:: !HAS(closed, g) && bn == BATCH -> closed = closed | BIT(g); i++
			:: !HAS(closed, g) && bn < BATCH && q[i].rc >= MRC ->
				dlq_append(q[i].pay, q[i].orig, q[i].id, W_MOVED);
				sqs_delete(i);
				closed = closed | BIT(g)
			:: !HAS(closed, g) && bn < BATCH && q[i].rc < MRC ->
				if
				:: g == first && !took -> took = 1; cbm[bn] = q[i].id; bn++; RECEIVED(i)
				:: g != first || took -> cbm[bn] = q[i].id; bn++; RECEIVED(i)
				:: g != first || took -> closed = closed | BIT(g)
				fi;
				i++
			fi
		:: else -> break
		od
	:: else
	fi
}

/* The batch received, for the trail. */
inline say_batch() {
	bi = 0;
	do
	:: bi < bn -> find_msg(cbm[bi]); printf("MSC: receive m%d (e%d, receive %d)\n", cbm[bi], q[mi].pay, q[mi].rc); bi++
	:: else -> break
	od;
	bi = 0
}

/* The index in the queue of message id m (it is there: a received message leaves the queue
 * only at the end of its batch). */
inline find_msg(a_m) {
	mi = 0;
	do
	:: q[mi].id == a_m -> break
	:: else -> mi++
	od;
	skip
}

/* The partial batch response (batch.Port.Run, sqsbatch.Processor.Handle): acknowledged
 * messages are deleted, the others visible again (their visibility timeout ends). */
inline batch_end() {
	bi = 0;
	do
	:: bi < bn ->
		find_msg(cbm[bi]);
		if
		:: HAS(ackm, bi) -> sqs_delete(mi)
		:: else -> q[mi].flight = 0
		fi;
		cbm[bi] = 0; bi++
	:: else -> break
	od;
	bn = 0; ackm = 0; bheld = 0; gfail = 0; started = 0; v = 0;
	check_not_lost()
}

/* A crash (out of memory, a timeout, a kill): nothing is answered, every message of the batch
 * is visible again once its visibility timeout ends, the environment's cache is gone. */
inline batch_crash() {
	bi = 0;
	do
	:: bi < bn -> find_msg(cbm[bi]); q[mi].flight = 0; cbm[bi] = 0; bi++
	:: else -> break
	od;
	bn = 0; ackm = 0; bheld = 0; gfail = 0; cached = 0; started = 0; v = 0;
	cm = 0; p = 0; co = 0; r = 0; g = 0; e = 0; w = 0; redel = 0; recov = 0; stale = 0
}

/* A crash at crash point n (1..12 in each consumer's file) between two calls, while the budget
 * lasts and if n is among CRASHAT's points (all by default). A scenario too wide to check at
 * once is checked as several runs, each allowing some of the points: with a budget of one
 * crash, every run of the scenario crashes at one point or none, so it is a run of one of them,
 * and together they check every run the scenario has. Bit n of CRASHAT is point n: a point past
 * 15 is off by default: raise the default with it. -DCRASHGHOST keeps the point of the crash in
 * the state (crashedat), so that runs crashing at two points never share a state: the split's
 * states then add up to the whole's (model_test.go checks it). */
#ifndef CRASHAT
#define CRASHAT 65534
#endif
#ifdef CRASHGHOST
#define CP(n) if :: ncrash < CRASHES && HAS(CRASHAT, n) -> ncrash++; crashedat = n; goto crashed :: skip fi
#else
#define CP(n) if :: ncrash < CRASHES && HAS(CRASHAT, n) -> ncrash++; goto crashed :: skip fi
#endif

/* A message's outcome in the batch: acknowledged (applied, a duplicate, dead-lettered), or
 * failed, with the rest of its group in the batch (batch.Runner.runGroup). */
#define ACK   ackm = ackm | BIT(bi); goto msg_done
#define FAILG gfail = gfail | BIT(g); goto msg_done
