// Package envelope decodes and encodes the CloudEvents 1.0 JSON (structured mode) envelope that
// every message body carries. A body that cannot be trusted to identify its event is
// malformed: the error names the field and the problem, and errors.Is(err, ErrMalformed).
package cloudevent
