package port

import "errors"

// Delivery says how an event reached the consumer: it is stored in the record and logged, so a
// person can find the message. Every field is optional.
type Delivery struct {
	MessageID      string // the transport's id of this delivery: an SQS message id, a stream record's event id
	SequenceNumber string // an SQS FIFO or stream sequence number
	ReceiveCount   int    // how many times the transport has delivered it, this time included
	Group          string // the ordered group it belongs to (an SQS FIFO MessageGroupId, a stream's key), for idempotency.HoldGroup
	// Origin is the id of the message this delivery was first sent as, when it was sent again
	// under a new id (a dead-letter redrive carries it); "" means MessageID. A group's held list
	// knows a message by it (OriginID), so that a message held before it could be decoded, or
	// held under its first id, is recognised when it comes back redriven.
	Origin string
	// HoldWritten says the port held Group naming this message before applying it
	// (Engine.HoldAhead; sqsbatch does on a message's last receives before the queue's
	// maxReceiveCount): the event is then never answered from the cache, so that its commit,
	// or its answer from its record, takes it off the hold. A redrive (Origin) is not either.
	HoldWritten bool
	// Body is the message as received, stored in the record when
	// idempotency.Config.StorePayload is set; when it is empty the event, encoded as a
	// CloudEvents JSON body, is stored instead.
	Body string
}

// OriginID is the id a group's held list knows the delivery by: Origin, else MessageID.
func (d Delivery) OriginID() string {
	if d.Origin != "" {
		return d.Origin
	}
	return d.MessageID
}

// Held is one message of a group's held list: a port names the messages it holds with it
// (Engine.HoldAhead), and an operator reads the list (operator.Hold).
// Its fields are the entry's attributes in the hold's items.
type Held struct {
	EventID   string `dynamodbav:"eventId"`   // "" when the message had no usable event id
	MessageID string `dynamodbav:"messageId"` // the id it was first sent as (Delivery.OriginID)
	// PayloadHash is the event's (cloudevent.Event.PayloadHash), "" when it was held before
	// it was decoded: with EventID it tells the message from another payload under the same
	// event id (a conflict).
	PayloadHash string `dynamodbav:"payloadHash,omitempty"`
	Reason      string `dynamodbav:"reason"` // why it was dead-lettered
	HeldAt      string `dynamodbav:"heldAt"` // when it was held, RFC 3339
}

// String names the message: by its event id, or by its message id when it has none.
func (e Held) String() string {
	if e.EventID == "" {
		return "message " + e.MessageID
	}
	return "event " + e.EventID
}

// ErrHoldFull is matched by the error of a hold write DynamoDB refused because an item would
// exceed its size limit (400 KB). A held list spreads over pages and never does; the hold's own
// item also keeps the operators' skips (for idempotency.DefaultRetention), which could. It is
// not retried: the message fails, is logged at error level naming the group, and is not
// dead-lettered unheld (see docs/failure-path.md).
var ErrHoldFull = errors.New("group's held list at DynamoDB's item size limit (400 KB)")
