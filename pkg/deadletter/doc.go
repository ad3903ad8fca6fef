// Package deadletter sends messages that can never succeed to an SQS dead-letter queue, body
// unchanged, with the reason and where they came from as message attributes, so a person can
// find, understand and redrive them. On a FIFO dead-letter queue a repeated dead-letter of one
// message is dropped by the broker.
//
// For the operator, Browse reads a dead-letter queue without taking anything from it, and
// Redrive moves letters back to the queues they came from, in order, with their group and a
// fresh deduplication id, deleting each only once it was sent; Take, Delete and Release let
// an operator's tool act on one letter it showed.
package deadletter
