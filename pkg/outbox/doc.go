// Package outbox is the publisher side of exactly-once: a service writes its entity and an
// outbox item holding the event in one TransactWriteItems (Write builds that item), and the
// Relay, fed by the table's DynamoDB stream, publishes each new outbox item to every FIFO
// queue its event type is routed to, with the event id as MessageDeduplicationId and the
// subject as MessageGroupId. Running the relay twice over the same records is harmless.
//
// Order per aggregate holds with any number of stream shards: DynamoDB Streams keeps the order
// of the records of one partition key in one shard, and Lambda processes each shard in order
// (shards concurrently). All outbox items of one aggregate (one subject, one FIFO message
// group) therefore share a partition key, and their events reach the queue in the order they
// were written. Outbox items of one partition key must be written one after the other (each
// after the previous write returned) for that order to be defined.
//
// An item SQS would refuse (a body, subject or event id with characters it does not accept,
// see CheckText) is never retried, which would block its shard: the Relay parks it in
// RelayConfig.ParkQueue as a Parked message, counts metrics.Parked and goes on.
//
// The outbox item, in the service's table (string keys pk and sk):
//
//	pk = "OUTBOX#<subject>"  sk = "EVENT#<eventId>"
//	kind        "outbox" (the stream filter and the relay select on it)
//	eventId     the event's stable id
//	eventType   the CloudEvents type, "order.placed"
//	subject     the aggregate id, the MessageGroupId
//	body        the CloudEvents JSON body, sent as is; characters SQS refuses and those beyond
//	            U+FFFF are \u escapes in it, so it is always sendable and decodes to the event
//	payloadHash cloudevent.Event.PayloadHash, to tell a retry from a conflicting reuse of the id
//	createdAt   RFC 3339 time of the write
//	expiresAt   epoch seconds; the table's TTL removes published items after Retention
//	traceHeader the X-Ray trace header of the request that wrote it (WithTrace), sent as the
//	            message's AWSTraceHeader system attribute; absent when not traced
//
// Find and Republish send outbox items again, by event id or by the time they were written,
// as the relay sends them: what an operator does after records of the stream failed for good.
package outbox
