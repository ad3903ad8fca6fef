// Package ledger is the ledger domain: the events a credit or debit request publishes, and the
// ledger consumer's pure decisions. A credit adds to the balance under the condition that it
// stays at or below math.MaxInt64 (else rejected: "balance would overflow"); a debit subtracts
// under the condition that the balance stays at or above zero, and its failure is the business
// outcome "insufficient funds" (rejected, not failed). Each applied movement also writes an entry.
//
// Items in the app table (single-table design, string keys pk and sk; kind names the item):
//
//	account pk "ACCOUNT#<id>"  sk "ACCOUNT"                 id, balance (minor units)
//	entry   pk "ACCOUNT#<id>"  sk "ENTRY#<time>#<eventId>"  eventId, type ("credit" or
//	                                                        "debit"), amount, at (RFC 3339)
//
// Entries sort by event time under their account, so a Query of the account's partition with
// sk beginning with EntryPrefix pages through its history in order.
package ledger
