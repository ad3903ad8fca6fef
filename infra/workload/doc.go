// Package workload drives the demo workload of `make run` through a running local cloud: notes
// and account movements through the public HTTP API with retried requests, events re-sent to
// their queues under new deduplication ids, malformed messages and a crash after commit (and,
// for `make chaos`, a redrive of every dead-letter queue, with the cloud injecting faults). It
// waits until the pipeline is drained, then counts what happened from the cloud's own sources
// (its stats, the functions' metrics, the tables and the queues) and checks the invariants of
// exactly-once processing.
package workload
