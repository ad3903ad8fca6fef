// Package deadletter is the dead-letter sink every port sends to, and the letter's format: a
// Queue sends a message that can never succeed to an SQS dead-letter queue, body unchanged,
// with the reason and where it came from as message attributes (the Attr constants), so a
// person can find, understand and redrive it; a body past SQS's limit goes as a claim check.
// On a FIFO dead-letter queue a repeated dead-letter of one message is dropped by the broker.
//
// A Letter is such a message read back (Read), and says how it is sent again (SendInput,
// ReplayInput, RedriveInput, RequeueInput). The operator's tools that browse, take, requeue
// and redrive letters are package dlq (pkg/operator/dlq).
package deadletter
