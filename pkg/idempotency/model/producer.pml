/*
 * producer.pml: the producer, shared by both protocols; included after the holds are declared
 * (a send takes a message id no held entry refers to: env.pml's new_id).
 */

/* ---- the producer: the outbox relay, in order, with a re-send of some payloads ---- */
/* r: the next payload sent again is r + 1 */
#define NEXT_RESEND do :: r < NP && !HAS(resend, r + 1) -> r++ :: else -> break od

proctype Producer() {
	byte p = 1, r = 0;
	SCRATCH_DECL;
	NEXT_RESEND;
	do
	:: atomic { p <= NP && ROOM -> d_step { sqs_send(p, 0); printf("MSC: producer sends e%d as m%d\n", p, nid); sent = sent | BIT(p); p++; SCRATCH0 }; CANON }
	:: atomic {
		r < NP && HAS(resend, r + 1) && HAS(sent, r + 1) && ROOM ->
			/* the same event sent again (a relay retry, `outbox republish`, a client's retry):
			 * within five minutes SQS drops it (its deduplication id is the event id) */
			if
			:: d_step { sqs_send(r + 1, 0); printf("MSC: producer sends e%d again as m%d\n", r + 1, nid) }
			:: printf("MSC: producer sends e%d again: dropped (deduplication window)\n", r + 1)
			fi;
			r++; NEXT_RESEND; SCRATCH0; CANON
		}
	:: atomic {
		DEPLOYS && !deployed ->
			deployed = 1;               /* a deploy whose handler refuses K_LATE's type */
			printf("MSC: a deploy refuses the type of K_LATE events\n")
		}
	:: atomic { p > NP && r >= NP && (!DEPLOYS || deployed) -> prod_done = 1; p = 0; r = 0; break }
	od
}
