// Package ledger is the ledger domain: the events a credit or debit request publishes, and the
// ledger consumer's pure decisions. A credit adds to the balance under the condition that it
// stays at or below math.MaxInt64 (else rejected: "balance would overflow"); a debit subtracts
// under the condition that the balance stays at or above zero, and its failure is the business
// outcome "insufficient funds" (rejected, not failed). Each applied movement also writes an entry.
// The movement's status is set on its movement item, applied or rejected, once.
//
// Items in the app table (single-table design, string keys pk and sk; kind names the item):
//
//	account  pk "ACCOUNT#<id>"        sk "ACCOUNT"                 id, balance (minor units)
//	entry    pk "ACCOUNT#<id>"        sk "ENTRY#<time>#<eventId>"  eventId, type ("credit" or
//	                                                               "debit"), amount, at (RFC 3339)
//	movement pk "MOVEMENT#<eventId>"  sk "MOVEMENT"                eventId, accountId, reference,
//	                                  type, amount, payloadHash, acceptedAt, status ("pending",
//	                                  "applied" or "rejected"), reason, at; no expiry
//
// Entries sort by event time under their account, so a Query of the account's partition with
// sk beginning with EntryPrefix pages through its history in order. The event id of a movement is derived from its account
// and reference (EventID), so the movement item is the reference's business key: the API
// writes it, pending, with the outbox event, and answers every later request with that
// reference from it; the ledger sets its status. Both the status and the entry are written
// only once (conditions marked OrDuplicate), so a movement is never applied twice, even when
// it is delivered again after the consumer's idempotency record expired.
package ledger
