// Package claimcheck carries payloads past SQS's message limit through S3, in the format of
// AWS's SQS extended client libraries (Java, Python, .NET): the payload is an S3 object, the
// message body a pointer to it, and the message attribute ExtendedPayloadSize its size. A
// Writer stores a payload and returns its Pointer (package publish sends it); a Reader turns
// a received message back into its payload, with a bound on its size (package sqsbatch reads
// it before decoding). Objects are never deleted by either: a lifecycle rule on the bucket
// expires them after the consumers' record retention.
package claimcheck
