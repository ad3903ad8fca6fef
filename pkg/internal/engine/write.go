package engine

import "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

// Effect is what applying an event changes in DynamoDB: writes committed in one transaction
// with the idempotency record. An empty effect is valid: decided without a read, it writes
// nothing (the event is Ignored); decided from a read, the event is recorded as applied.
type Effect []Write

// Write is one write of an effect as the engine commits it, compiled from an
// idempotency.Write: the SDK's item, or the error that made it impossible to encode (the
// effect is then refused, an EffectError, before anything is sent); the business reason a
// failure of its condition means (OrReject); whether such a failure proves the event applied
// before (OrDuplicate); and the writes committed with the rejection record (OnReject).
type Write struct {
	Item      types.TransactWriteItem
	Err       error
	Reason    string
	Duplicate bool
	OnReject  Effect
}
