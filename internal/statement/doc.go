// Package statement is the account statement: the example application's stream consumer. It
// reads the app table's DynamoDB stream (through pkg/dynamodbbatch) and writes one statement
// line per change of an account item, in the order of the item's changes, exactly once: the
// record of consumer "statement" for the stream record's eventID commits in the same
// transaction as the line, and the line is written only if new.
//
// The ledger sets lastEvent, the movement's event id, on every change of an account's balance;
// a change of an account item without it was written by something other than the ledger (a
// migration, a hand edit) and is malformed: dead-lettered with its reason, its account held
// behind it (HoldGroup: the lines of later changes wait in order) until an operator decides
// it (docs/runbook.md, a stream consumer's key is held).
//
// Items in the app table (single-table design, string keys pk and sk; kind names the item):
//
//	line  pk "STATEMENT#<account id>"  sk "LINE#<sequence number, 40 digits>"  accountId,
//	                                   eventId (the movement), balance (after it), change (the
//	                                   stream record's eventID)
//	head  pk "STATEMENT#<account id>"  sk "HEAD"  last (the sort key of the last line written),
//	                                   balance
//
// Lines sort by the stream's sequence number under their account, which is the order of the
// account item's changes: each line's balance is the previous line's plus its movement's amount.
// The head is written with each line, on condition that the line comes after the last one: a
// change applied after a later one is rejected (ReasonOutOfOrder), so a statement with every
// line was written in the stream's order.
package statement
