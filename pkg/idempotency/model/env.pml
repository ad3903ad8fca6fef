/*
 * env.pml: the world the recovery protocol (recovery.pml) runs in. Read docs/recovery-model.md
 * first: it says what each check proves and how to run it.
 *
 * What is abstracted, and how:
 *  - DynamoDB items are globals. A conditional write, a TransactWriteItems and a consistent read
 *    are each one atomic step (d_step). A write conditional on a hold's version that the Go code
 *    retries after re-reading (changeHold) is one step too: it takes effect at the write that
 *    succeeds, on the hold as it is then. A version is not kept: "unchanged since read" is
 *    "equal to what was read", and a change that leaves the item equal decides nothing new.
 *    TTL never runs (records outlive every path: DefaultRetention), so a record, once written,
 *    never changes. Rejections (an effect's own condition failing) are not modelled: they take
 *    the commit path of an applied event, with the same record and hold writes.
 *  - Packs are not modelled: each event commits alone (a pack is resolved per member from its
 *    cancellation reasons, into what each member's own transaction would have done).
 *  - SQS FIFO, per group: a compact array in send order; a receive takes, per group that has no
 *    message in flight, a prefix of its visible messages (several messages of one group in a
 *    batch, as AWS delivers them), up to BATCH in all, and adds one to each one's receive count.
 *    A visible head of a group received MRC times already is moved by the queue to the
 *    dead-letter queue (the redrive policy's maxReceiveCount) instead. Visibility timeouts are
 *    "the message becomes visible again at the end of the invocation that failed or crashed".
 *  - Deduplication windows are a nondeterministic drop: a producer's re-send with the event id
 *    as its deduplication id, and a dead-letter send with the message id as its own, may be
 *    dropped (within five minutes) or kept (later). A redrive's fresh id is never dropped.
 *  - Lambda: one invocation at a time (the groups of a batch run one after the other; they
 *    share no item unless an event id is reused across groups, which is not modelled). A crash
 *    (out of memory, a timeout, a kill) is a nondeterministic stop between any two calls, up to
 *    CRASHES per run, besides the crashes a poison message of kind CRASH causes each time its
 *    handler runs; it loses the environment's cache, and every message of the batch becomes
 *    visible again. A crash before the backstop hold on both of a message's last receives is the
 *    backstop's documented limit (docs/failure-path.md): CRASHES < BACKSTOP keeps out of it.
 *  - The operator's tool (cmd/onceflow) is one process; each command's conditional write on what
 *    it showed is atomic with the showing (a write refused because the item changed is a
 *    command that did nothing), and the CLI may stop (a crash, a lost connection) between any two
 *    of its calls, up to CLICRASH times.
 *  - Ids: payloads (bodies) are 1..NP; an event id is a payload's id, the same for two payloads
 *    when the producer reused it (a conflict); message ids are 1..MMAX-1, new for every send:
 *    a send takes the smallest id nothing refers to any more (no message or letter, held entry,
 *    attempts item, skip, discard, or the operator's view of it), which behaves exactly as a
 *    fresh one, since ids are only ever compared for equality. So a run that redrives and
 *    redelivers without end can repeat a state, and liveness sees its cycle; ids running out
 *    is an assertion (a model bound), never a cycle.
 *    A claim check, other envelopes, SQS's 10-attribute limit (a redrive then cannot carry the
 *    id a message was first sent as), a discard of a body the tool cannot read (no payload
 *    hash), the lease mode and GoOn are not modelled: see docs/recovery-model.md for the Go
 *    tests that cover them.
 */

#include "scenarios.pml"

#define NG 2            /* groups (accounts) */
#ifndef QMAX
#define QMAX 7          /* messages in the source queue at once */
#endif
#ifndef DMAX
#define DMAX 9          /* letters in the dead-letter queue at once */
#endif
#ifndef MMAX
#define MMAX 16         /* message ids: 1..MMAX-1, recycled (bitmasks are 32 bits) */
#endif

/* Kinds of payload. */
#define K_OK    0       /* applies */
#define K_FAIL  1       /* its handler fails (a downstream error) until its cause is fixed */
#define K_CRASH 2       /* the function dies while its handler runs, until its cause is fixed */
#define K_MALF  3       /* the handler refuses it: malformed (unknown type, invalid data) */
#define K_UNDEC 4       /* the body cannot be decoded: no event id */
#define K_CONFL 5       /* reuses the event id of an earlier payload with another payload */
#define K_LATE  6       /* applies, until a later deploy refuses its type (then malformed) */

/* A letter's reason (what `onceflow dlq list` shows): failed MaxAttempts times, malformed,
 * not decodable, an event id reused with another payload, its group held behind an earlier
 * letter, moved by the queue's redrive policy (a letter with no reason attribute). */
mtype = { W_FAILED, W_MALF, W_UNDEC, W_CONFL, W_HELD, W_MOVED };

/* What became of a payload (ghost: for the properties only). */
#define D_APPLIED   1
#define D_DISCARDED 2

/* ---- the scenario: payloads, their groups, kinds and ids (scenarios.pml fills them) ---- */
byte kind[NP+1];
byte grp[NP+1];
byte eid[NP+1];         /* event id of payload p (p itself unless reused) */
byte resend;            /* bitmask of payloads the producer sends a second time */

/* ---- SQS: the source queue (FIFO) ---- */
typedef Msg {
	byte id;            /* SQS message id */
	byte pay;           /* body */
	byte orig;          /* the id it was first sent as (onceflowOriginalMessageId), else id */
	byte rc;            /* ApproximateReceiveCount */
	bit  flight;        /* received, not yet deleted or visible again */
	bit  old            /* ghost: its event was decided before it was first received */
};
Msg  q[QMAX];
byte qn;

/* ---- SQS: the dead-letter queue (FIFO, grouped as the source) ---- */
typedef Letter {
	byte pay;
	byte orig;          /* Letter.OriginalMessage */
	byte src;           /* Letter.SourceMessage: the message it was dead-lettered as */
	mtype why
};
Letter dl[DMAX];
byte dn;
int  dlsent;            /* message ids dead-lettered once: a second send may fall in the window */
int  lset;              /* message ids whose letter the consumer noted as sent (S11, table.LetterKey) */

/* ---- DynamoDB: the idempotency table ---- */
byte recp[NP+1];        /* record of event id i: the payload (its hash) it was decided with; 0: none */
int  mdec;             /* first message ids an operator discarded (table.MessageKey): no event id, or a conflict */
byte attm[NP+1];        /* attempts item of event id i: the message it counts (messageId) */
byte attn[NP+1];        /* ... and its count (messageAttempts) */

/* ---- ghosts: what happened, for the properties ---- */
byte dec[NP+1];         /* D_APPLIED, D_DISCARDED, or 0 */
bit  gaveup[NP+1];      /* an operator gave up its order: hold skip, hold release */
byte sent;              /* payloads sent at least once */
int  kept;              /* message origins an operator skipped: their letters are kept for later */
byte keptp;             /* ... and payloads (an event skipped, known by its id and payload hash) */
bit  nofix[NP+1];       /* the operator decided its cause will never be fixed (discard, skip) */
bit  fixed[NP+1];       /* its cause was fixed (a deploy, a downstream repaired) */
bit  deployed;          /* the deploy that refuses K_LATE's type has happened */
bit  prod_done;         /* the producer sent everything it sends */
byte pp = 1, pr;        /* the producer (producer.pml): the next payload it sends, the last it sent again */
byte unkept;            /* letters in the dead-letter queue that are not kept for later */
byte hd[NG];            /* the letter heading each group of the dead-letter queue; DMAX: none */
bit  hk[NG];            /* every letter of the group is kept for later (or there is none) */
byte ncrash;            /* consumer crashes so far (besides K_CRASH's) */
#ifdef CRASHGHOST
byte crashedat;         /* ghost: the crash point of the run's crash, 0: none (receive.pml) */
#endif
byte nstale;            /* stale record reads so far (core.answered's GetItem is eventually consistent) */
byte nclicrash;         /* CLI stops so far */
byte so0, so1;          /* the operator's view: the heads of the holds a round saw (runbook.pml) */
int  sentm;             /* ... and the message ids the redrive running sent (redrive_step) */
byte rdn;               /* ... and how many of the letters it began with are left (the first rdn) */
bit  rdst;              /* ... and whether it has begun */
byte olo;               /* ... and the first message id of the letter or held message in hand */
byte cbm[BATCH];        /* the consumer's batch: its message ids, in the queue's order */
byte cm, co;            /* ... and the message in hand: its id, and the id it was first sent as */

/* Scratch variables: each process that uses the inlines below declares them, and sets them
 * to 0 again at the end of every atomic step that used them (SCRATCH0), so that they never tell
 * two states apart. */
#define SCRATCH_DECL byte i, j, k, x, mi, first, closed, nid, ck; bit found, took, nu
#define SCRATCH0 i = 0; j = 0; k = 0; x = 0; mi = 0; first = 0; closed = 0; nid = 0; ck = 0; found = 0; took = 0; nu = 0

#define BIT(i)       (1 << (i))
#define HAS(m, i)    (((m) >> (i)) & 1)
/* Letter j is kept for later: its message, or its event, was skipped by an operator. */
#define KEPT(j)      (HAS(kept, dl[j].orig) || HAS(keptp, dl[j].pay))

/* ---- properties ---- */

/* Exactly once and order, checked at the moment payload p's effect commits. */
inline check_apply(a_p) {
	assert(dec[a_p] != D_APPLIED);        /* exactly once: no payload applied twice */
	assert(dec[a_p] != D_DISCARDED);      /* nothing applied after its discard */
	k = 1;
	do
	:: k < a_p ->
		/* order: every earlier payload of the group is decided, or its order was given up */
		assert(grp[k] != grp[a_p] || dec[k] != 0 || gaveup[k]);
		k++
	:: else -> break
	od;
	k = 1;
	do
	:: k <= NP ->                       /* exactly once per event id: a reused id is applied once */
		assert(k == a_p || eid[k] != eid[a_p] || dec[k] != D_APPLIED);
		k++
	:: else -> break
	od;
	dec[a_p] = D_APPLIED
}

/* An operator's decision is final: a message whose event was decided before it was first
 * received (a re-send, a republish, a letter redriven after its discard) is answered: its
 * handler never runs again once it is received a second time, and the consumer never
 * dead-letters it (SQS may still move it with a batch that crashed for another message: that
 * letter is a duplicate, which the runbook's discard or redrive clears). -DNOALARM=0 leaves the
 * property out. */
#ifndef NOALARM
#define NOALARM 1
#endif
#define check_no_alarm(old) assert(!NOALARM || !(old))

/* Nothing lost: every payload sent is decided, or a message in the queue, or a letter a person
 * can find. Checked after every step that deletes a message or a letter. */
inline check_not_lost() {
	k = 1;
	do
	:: k <= NP ->
		if
		:: HAS(sent, k) && dec[k] == 0 ->
			j = 0; found = 0;
			do
			:: j < qn -> if :: q[j].pay == k -> found = 1 :: else fi; j++
			:: else -> break
			od;
			j = 0;
			do
			:: j < dn -> if :: dl[j].pay == k -> found = 1 :: else fi; j++
			:: else -> break
			od;
			assert(found)
		:: else
		fi;
		k++
	:: else -> break
	od;
	skip
}

/* How many letters are not kept for later (a letter of a message an operator skipped is), which
 * letter heads each group of the dead-letter queue (DMAX: none), and whether every letter of
 * the group is kept for later: what an operator sees. */
inline recount() {
	j = 0; unkept = 0; hd[0] = DMAX; hd[1] = DMAX; hk[0] = 1; hk[1] = 1;
	do
	:: j < dn ->
		if :: !KEPT(j) -> unkept++ :: else fi;
		if :: hd[grp[dl[j].pay]] == DMAX -> hd[grp[dl[j].pay]] = j :: else fi;
		if :: !KEPT(j) -> hk[grp[dl[j].pay]] = 0 :: else fi;
		j++
	:: else -> break
	od;
	skip
}

/* ---- SQS operations ---- */

/* The smallest message id nothing refers to (nid): no message in the source queue (its id or
 * the id it was first sent as), no letter, no held entry or skip, no attempts item, no discard
 * of a message, no letter kept for later, and none the operator holds in view (a redrive's
 * sends, a round's view of the holds). Ids are only compared for equality, so such an id is as
 * good as a fresh one. */
inline new_id() {
	nid = 1;
	do
	:: nid < MMAX ->
		nu = (HAS(mdec, nid) || HAS(lset, nid) || HAS(kept, nid) || HAS(h[0].skipped, nid) || HAS(h[1].skipped, nid) ||
		      HAS(sentm, nid) || so0 == nid || so1 == nid);
		ck = 0;
		do
		:: !nu && ck < qn -> nu = (q[ck].id == nid || q[ck].orig == nid); ck++
		:: else -> break
		od;
		ck = 0;
		do
		:: !nu && ck < dn -> nu = (dl[ck].orig == nid || dl[ck].src == nid); ck++
		:: else -> break
		od;
		ck = 0;
		do
		:: !nu && (ck < h[0].n || ck < h[1].n) ->
			nu = ((ck < h[0].n && h[0].orig[ck] == nid) || (ck < h[1].n && h[1].orig[ck] == nid)); ck++
		:: else -> break
		od;
		ck = 0;
		do
		:: !nu && ck <= NP -> nu = (attm[ck] == nid); ck++
		:: else -> break
		od;
		if :: nu -> nid++ :: else -> break fi
	:: else -> break
	od;
	assert(nid < MMAX);                     /* a model bound: more ids in use than MMAX - 1 */
	ck = 0; nu = 0
}

/* SendMessage of body p to the source queue, first sent as orig (0: as itself), under a new
 * message id (nid). */
#define ROOM (qn < QMAX)                    /* a model bound: a send waits for room */
inline sqs_send(a_p, a_o) {
	new_id();
	q[qn].id = nid; q[qn].pay = a_p; q[qn].rc = 0; q[qn].flight = 0; q[qn].old = 0;
	if :: a_o == 0 -> q[qn].orig = nid :: else -> q[qn].orig = a_o fi;
	qn++
}

/* Delete message index i of the source queue (its deletion keeps the others in order). */
inline sqs_delete(a_i) {
	dlsent = dlsent & ~BIT(q[a_i].id);      /* only this message is ever dead-lettered as itself */
	lset = lset & ~BIT(q[a_i].id);          /* ... and only its own deliveries read its note */
	j = a_i;
	do
	:: j + 1 < qn ->
		q[j].id = q[j+1].id; q[j].pay = q[j+1].pay; q[j].orig = q[j+1].orig;
		q[j].rc = q[j+1].rc; q[j].flight = q[j+1].flight; q[j].old = q[j+1].old; j++
	:: else -> break
	od;
	qn--;
	q[qn].id = 0; q[qn].pay = 0; q[qn].orig = 0; q[qn].rc = 0; q[qn].flight = 0; q[qn].old = 0
}

/* Append a letter to the dead-letter queue. */
inline dlq_append(a_p, a_o, a_s, a_w) {
	assert(dn < DMAX);                      /* a model bound */
	printf("MSC: letter of m%d (e%d, first sent as m%d): %e\n", a_s, a_p, a_o, a_w);
	dl[dn].pay = a_p; dl[dn].orig = a_o; dl[dn].src = a_s; dl[dn].why = a_w;
	dn++;
	recount()
}

/* DeleteMessage of letter index i of the dead-letter queue. */
inline dlq_delete(a_i) {
	j = a_i;
	do
	:: j + 1 < dn ->
		dl[j].pay = dl[j+1].pay; dl[j].orig = dl[j+1].orig; dl[j].src = dl[j+1].src;
		dl[j].why = dl[j+1].why; j++
	:: else -> break
	od;
	dn--;
	dl[dn].pay = 0; dl[dn].orig = 0; dl[dn].src = 0; dl[dn].why = 0;
	recount()
}

/* The queue's redrive policy: every visible head of a group received MRC times already is
 * moved to the dead-letter queue by SQS (a letter with no reason: W_MOVED). Run at each
 * receive, before the batch is chosen. */
inline sqs_move_exhausted() {
	i = 0;
	do
	:: i < qn ->
		/* is q[i] the head of its group? */
		j = 0; found = 0;
		do
		:: j < i -> if :: grp[q[j].pay] == grp[q[i].pay] -> found = 1 :: else fi; j++
		:: else -> break
		od;
		if
		:: !found && !q[i].flight && q[i].rc >= MRC ->
			dlq_append(q[i].pay, q[i].orig, q[i].id, W_MOVED);
			sqs_delete(i)               /* the next message is at i now */
		:: else -> i++
		fi
	:: else -> break
	od;
	skip
}

/* The cause of payload x fixed: only a cause that can be (a failure, a crash) is noted, since
 * fixed is read of those kinds only. */
#define FIX(x) if :: kind[x] == K_FAIL || kind[x] == K_CRASH -> fixed[x] = 1 :: else fi

/* nothing held or stuck: the source queue drained, no group held, every letter left in the
 * dead-letter queue one an operator kept for later (skipped), the producer done */
#define clean (prod_done && qn == 0 && h[0].n == 0 && h[1].n == 0 && unkept == 0)
