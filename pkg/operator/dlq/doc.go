// Package dlq is the operator's tools over a dead-letter queue, next to the operator's API
// over the idempotency table (package operator): Browse reads the letters without taking
// anything from the queue; Redrive moves those the queue held when it began back to the queues
// they came from, in order, with their group and a fresh deduplication id, deleting each only
// once it was sent; Take,
// TakeWhere, Delete, Release and Requeue act on one letter an operator's tool showed. The
// onceflow tool's dlq commands (cmd/onceflow) are built on it.
//
// The letters are package deadletter's: its Queue is the sink the ports send them to, and its
// Letter reads one back.
package dlq
