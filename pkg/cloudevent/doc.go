// Package cloudevent is the CloudEvents codec of the engine: it decodes and encodes the
// CloudEvents 1.0 JSON (structured mode) envelope every message body carries, decodes an
// event's data into a typed value, and hashes what makes two sends the same event. A body that
// cannot be trusted to identify its event is malformed: the error names the field and the
// problem, matches ErrMalformed, and is permanent (never retried, dead-lettered).
package cloudevent
