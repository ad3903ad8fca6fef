package envelope

import "strings"

// What each decoder keys its events on, for a conflict's reason (idempotency.ConflictError's
// KeyedOn): the port asks its decoder's KeyedOn.

// KeyedOn is "the CloudEvents id".
func (CloudEvents) KeyedOn() string { return "the CloudEvents id" }

// KeyedOn names the detail's key fields.
func (d EventBridge) KeyedOn() string {
	return "the detail's " + fieldList(d.Key) + " (envelope.EventBridge Key)"
}

// KeyedOn names the message's key fields.
func (d SNS) KeyedOn() string { return "the message's " + fieldList(d.Key) + " (envelope.SNS Key)" }

// KeyedOn names the body's key fields.
func (d JSON) KeyedOn() string { return "the body's " + fieldList(d.Key) + " (envelope.JSON Key)" }

// KeyedOn names the object version S3 reports.
func (S3) KeyedOn() string {
	return "the object version (event name, bucket, key, versionId and sequencer)"
}

func fieldList(paths []string) string { return strings.Join(paths, ", ") }
