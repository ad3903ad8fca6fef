package table

import (
	"strconv"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// KeySeparator separates the consumer name from the event id in a key; consumer names may not
// contain it, so no two consumer and event pairs share a key.
const KeySeparator = "#"

// Attribute names of the table's items used in conditions.
const (
	AttrKey       = "pk"
	AttrExpiresAt = "expiresAt"
)

// Key is the idempotency key of event eventID for consumer: the record's pk.
func Key(consumer, eventID string) string { return consumer + KeySeparator + eventID }

// ItemKey is the key of the item whose pk is pk, as DynamoDB takes it.
func ItemKey(pk string) map[string]types.AttributeValue {
	return map[string]types.AttributeValue{AttrKey: &types.AttributeValueMemberS{Value: pk}}
}

// AttemptsKey is the key of the item counting an event's failed attempts for a consumer. It
// starts with the key separator, which no consumer name contains, so it never collides with a
// record's key, and the record's conditional write never sees it.
func AttemptsKey(consumer, eventID string) string {
	return KeySeparator + "attempts" + KeySeparator + Key(consumer, eventID)
}

// HoldKey is the key of a group's hold item. It starts with the key separator, which no
// consumer name contains, so it never collides with a record's key.
func HoldKey(consumer, group string) string {
	return KeySeparator + "hold" + KeySeparator + consumer + KeySeparator + group
}

// pageSeparator joins a hold's key and a page number in the page's key. SQS refuses it in a
// MessageGroupId; a group of another source that contains it is refused when read (a hold's
// and a page's decoding check whose item they read).
const pageSeparator = "\x1fpage"

// PageKey is the key of overflow page n of a group's hold: under the hold's own key, so under
// the prefix of a consumer's holds (an IAM condition on it covers the pages).
func PageKey(consumer, group string, n int) string {
	return HoldKey(consumer, group) + pageSeparator + strconv.Itoa(n)
}

// messageSeparator joins a hold's key and a message id in the key of an operator's discard of
// that message (MessageKey).
const messageSeparator = "\x1fmessage"

// MessageKey is the key of the record of an operator's discard of consumer's message
// messageID (the id it was first sent as) of group, a message that has no event id (a body
// that is not an event): the decision is known by the message, the one id it has. It lies under
// the group's hold key (as a page does, another separator), so the consumer's grants on its
// holds cover it.
func MessageKey(consumer, group, messageID string) string {
	return HoldKey(consumer, group) + messageSeparator + messageID
}

// letterSeparator joins a hold's key and a message id in the key of the note that the
// consumer's letter of that message was sent (LetterKey).
const letterSeparator = "\x1fletter"

// LetterKey is the key of the note that consumer sent the dead letter of message messageID (the
// id of the delivery itself, not the one it was first sent as: a redriven copy is a message of
// its own, with a letter of its own) of group. It lies under the group's hold key, so the
// consumer's grants on its holds cover it.
func LetterKey(consumer, group, messageID string) string {
	return HoldKey(consumer, group) + letterSeparator + messageID
}

// DiscardedKey is the key of the copy of a conflict's letter discarded for consumer's event
// eventID. It starts with the key separator, so it never collides with a record's key.
func DiscardedKey(consumer, eventID string) string {
	return KeySeparator + "discarded" + KeySeparator + consumer + KeySeparator + eventID
}
