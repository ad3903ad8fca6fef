// Package cloudevent is the CloudEvents codec of the engine: it decodes and encodes the
// CloudEvents 1.0 JSON (structured mode) envelope every message body carries, decodes an
// event's data into a typed value, and hashes what makes two sends the same event. It is a
// tolerant reader of what is valid: an attribute or a data field it does not know is ignored,
// so that a producer may add one. It is strict about what is broken: a body that cannot be
// trusted to identify its event (no id, not UTF-8, a member twice) is malformed. The error
// names the field and the problem, matches ErrMalformed, and is permanent (never retried,
// dead-lettered).
package cloudevent
