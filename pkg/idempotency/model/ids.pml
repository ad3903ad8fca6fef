/*
 * ids.pml: message ids renamed to a canonical form after every step (symmetry reduction).
 *
 * Message ids are only ever compared for equality (and kept in sets of ids), and a new id is any
 * id nothing refers to: two states that differ only by a renaming of message ids have the same
 * futures, renamed. So after every step the ids in use are renamed, in a fixed order of where
 * they occur (the source queue, the dead-letter queue, the holds, the attempts items, what the
 * consumer and the operator hold in hand; then the ids only in sets, by the sets they are in),
 * and each class of states that differ only by their ids is stored once. Liveness is kept too:
 * `clean` mentions no id, and a cycle of renamed states is a path from a state to one of its
 * renamings, which, repeated, comes back to where it started.
 *
 * It is C (pan's embedded code), run by the verifier only: `spin -t` replays a trail without
 * it, so a trail names each message by one id throughout; its steps are the same, since every
 * test the model makes of an id is an equality (or a set's membership) and the ids of a state
 * are a renaming of the replay's.
 */

c_code {
static uchar ren[32];
static int ren_next;

static void ren_see(uchar v) { if (v != 0 && ren[v] == 0) ren[v] = (uchar) ++ren_next; }

static uchar ren_id(uchar v) { return ren[v]; }

static int ren_set(int m) {
	int i, out = 0;
	for (i = 1; i < 32; i++) if ((m >> i) & 1) out |= 1 << ren[i];
	return out;
}

static int ren_sig(int i) {
	return ((now.mdec >> i) & 1) | ((now.kept >> i) & 1) << 1 | ((now.h[0].skipped >> i) & 1) << 2 |
		((now.h[1].skipped >> i) & 1) << 3 | ((now.dlsent >> i) & 1) << 4 | ((now.sentm >> i) & 1) << 5 | ((now.lset >> i) & 1) << 6;
}

void canon(void) {
	int i, j, x, g, k = 0, sig[32], id[32];
	memset(ren, 0, sizeof ren); ren_next = 0;
	for (i = 0; i < now.qn; i++) { ren_see(now.q[i].id); ren_see(now.q[i].orig); }
	for (i = 0; i < now.dn; i++) { ren_see(now.dl[i].orig); ren_see(now.dl[i].src); }
	for (g = 0; g < NG; g++) for (x = 0; x < now.h[g].n; x++) ren_see(now.h[g].orig[x]);
	for (i = 0; i <= NP; i++) ren_see(now.attm[i]);
	for (i = 0; i < BATCH; i++) ren_see(now.cbm[i]);
	ren_see(now.cm); ren_see(now.co); ren_see(now.olo); ren_see(now.so0); ren_see(now.so1);
	/* ids only in sets, in the order of the sets they are in; two with the same sets are alike */
	for (i = 1; i < MMAX; i++) if (ren[i] == 0 && ren_sig(i) != 0) { sig[k] = ren_sig(i); id[k] = i; k++; }
	for (i = 1; i < k; i++) for (j = i; j > 0 && sig[j-1] > sig[j]; j--) {
		x = sig[j]; sig[j] = sig[j-1]; sig[j-1] = x; x = id[j]; id[j] = id[j-1]; id[j-1] = x;
	}
	for (i = 0; i < k; i++) ren[id[i]] = (uchar) ++ren_next;
	for (i = 0; i < now.qn; i++) { now.q[i].id = ren_id(now.q[i].id); now.q[i].orig = ren_id(now.q[i].orig); }
	for (i = 0; i < now.dn; i++) { now.dl[i].orig = ren_id(now.dl[i].orig); now.dl[i].src = ren_id(now.dl[i].src); }
	for (g = 0; g < NG; g++) {
		for (x = 0; x < now.h[g].n; x++) now.h[g].orig[x] = ren_id(now.h[g].orig[x]);
		now.h[g].skipped = ren_set(now.h[g].skipped);
	}
	for (i = 0; i <= NP; i++) now.attm[i] = ren_id(now.attm[i]);
	for (i = 0; i < BATCH; i++) now.cbm[i] = ren_id(now.cbm[i]);
	now.cm = ren_id(now.cm); now.co = ren_id(now.co); now.olo = ren_id(now.olo);
	now.so0 = ren_id(now.so0); now.so1 = ren_id(now.so1);
	now.mdec = ren_set(now.mdec); now.kept = ren_set(now.kept); now.dlsent = ren_set(now.dlsent); now.sentm = ren_set(now.sentm); now.lset = ren_set(now.lset);
}
}

#ifdef NOCANON
#define CANON skip
#else
#define CANON c_code { canon(); }
#endif

/* A new id is chosen in one indivisible step (a d_step), so that a replay, whose ids are not
 * renamed, chooses its own smallest free id without leaving the trail. */
