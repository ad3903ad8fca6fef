// Package engine is the engine behind the public rooms: the idempotent consumer's two modes
// (Consumer, the transactional one behind package idempotency; LeasedConsumer, the fenced
// lease behind package lease), the port contract's Engine and Batch they implement (package
// port), and what both share: the record and its cache, the duplicate and conflict decisions,
// the one retry layer, the counting of failed attempts, the holds of ordered groups, and the
// one log line and metric per event.
//
// Its types mirror the public ones (Config, Result, a compiled Effect); the public packages
// convert at their boundary, so that a consumer author, a port author and an operator each
// meet a small package of their own, and the engine stays one piece of code.
package engine
