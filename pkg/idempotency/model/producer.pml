/*
 * producer.pml: the producer (the outbox relay), shared by both protocols: it sends each
 * payload in order, and some a second time (a relay retry, `outbox republish`, a client's
 * retry), which SQS drops within five minutes (the deduplication id is the event id).
 *
 * Its sends are made by the consumer's receive and the operator's redrive, just before they
 * read the queue: the receive is the only step that takes a message out of it, the redrive's
 * send goes behind the producer's, and every other step reads it through `clean`, false while a
 * send is still to come. So a run in which a send is made earlier is, step for step, the run
 * in which it is made just before the next receive or redrive; each of them may first make any
 * number of the sends still to come, in the producer's order (docs/recovery-model.md, "How the
 * model is kept small", says why no verdict changes).
 */

/* pr: the next payload sent again is pr + 1 */
#define NEXT_RESEND do :: pr < NP && !HAS(resend, pr + 1) -> pr++ :: else -> break od

/* Everything sent (or dropped) that the producer will send. */
#define PRODUCED (pp > NP && pr >= NP)

/* Any number of the producer's sends still to come, in its order, while the queue has room;
 * with must, at least one when the queue is empty (a receive of nothing is no step). The
 * producer is done once everything is sent and the deploy (if any) made. */
inline produce(a_must) {
	do
	:: pp <= NP && ROOM ->
		d_step { sqs_send(pp, 0); printf("MSC: producer sends e%d as m%d\n", pp, nid); sent = sent | BIT(pp); pp++; SCRATCH0 }
	:: pr < NP && HAS(resend, pr + 1) && HAS(sent, pr + 1) && ROOM ->
		if
		:: d_step { sqs_send(pr + 1, 0); printf("MSC: producer sends e%d again as m%d\n", pr + 1, nid); SCRATCH0 }
		:: printf("MSC: producer sends e%d again: dropped (deduplication window)\n", pr + 1)
		fi;
		pr++; NEXT_RESEND
	:: !(a_must) || qn > 0 || PRODUCED -> break
	od;
	if :: PRODUCED && (!DEPLOYS || deployed) -> prod_done = 1 :: else fi
}

/* A deploy whose handler refuses K_LATE's type, at any moment (the handler reads it). */
proctype Deploy() {
	atomic {
		deployed = 1;
		if :: PRODUCED -> prod_done = 1 :: else fi;
		printf("MSC: a deploy refuses the type of K_LATE events\n")
	}
}
