// Package notify is the note-notifier's side effect: it POSTs a JSON notification of each
// note.created event to a webhook, with an Idempotency-Key header derived from the engine's
// idempotency key, so the receiver can drop the repeat that a crash between the call and its
// completion makes unavoidable. Every request is signed (see Sign), redirects are refused, the
// URL must be https (http only to loopback) and never appears in an error. It runs under
// lease.Consumer.
package notify
