// Package table is the layout of the idempotency table's items, shared by the consumer
// (pkg/idempotency) and the operator's API (pkg/operator): the keys of a consumer's records,
// attempt counts, holds and an operator's discards, the record itself, and the conditions and
// formats every writer of those items agrees on.
package table
