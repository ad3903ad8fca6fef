// Package envelope holds the decoders that turn an SQS message into the engine's event
// (cloudevent.Event): CloudEvents, EventBridge events, SNS notifications, S3 event
// notifications, plain JSON, and a function for anything else. Give one to
// sqsbatch.Config.Decoder; CloudEvents is the default.
//
// The event's ID is the idempotency key: it must name the logical event, the same on every
// delivery and every publisher retry. EventBridge's id and SNS's MessageId are new on every
// PutEvents or Publish call, so a publisher that retries a call sends a new id; only a business
// key taken from the payload (an order id with its event type, a payment reference) makes that
// retry a duplicate. The decoders therefore take the key from fields of the payload that you
// name, never from the transport's id. The payload hash that detects a conflict (same key,
// other payload) covers the logical payload (EventBridge's detail, SNS's Message, the body),
// never the envelope, whose id and time change between two sends of one event.
package envelope
