package engine

import (
	"errors"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go"

	"github.com/onceflow/onceflow/pkg/internal/denied"
)

type verdictKind int

const (
	committed     verdictKind = iota
	recordExists              // the record's condition failed: duplicate or conflict
	held                      // the group's hold refused the commit (HoldGroup)
	effectFailed              // an effect's own condition failed: rejected
	transient                 // throttling, conflicts, 5xx, network: retry
	permanent                 // DynamoDB refuses the request as such: retrying cannot help
	refusedAccess             // IAM refuses the call: the deployment's fault, not retried here (denied.Of)
)

type verdict struct {
	kind    verdictKind
	index   int                             // for effectFailed: the first failed write
	failed  []int                           // for effectFailed: every failed write
	reasons []types.CancellationReason      // for effectFailed: every item's, in order
	old     map[string]types.AttributeValue // for recordExists: the stored record, if returned; for held: the hold
	// What the group's hold check found, besides (for a duplicate, which may be on the list):
	// holdFree that the group is not held, holdHeld that it is, hold its item as returned.
	holdFree, holdHeld bool
	hold               map[string]types.AttributeValue
}

// Cancellation reason codes and error codes DynamoDB returns, by class.
var transientCodes = map[string]bool{
	"TransactionConflict":                    true,
	"TransactionConflictException":           true,
	"ThrottlingError":                        true,
	"ThrottlingException":                    true,
	"ProvisionedThroughputExceeded":          true,
	"ProvisionedThroughputExceededException": true,
	"RequestLimitExceeded":                   true,
	"InternalServerError":                    true,
	"ServiceUnavailable":                     true,
	"TransactionInProgressException":         true,
	"LimitExceededException":                 true,
}

var permanentCodes = map[string]bool{
	"ValidationError":                 true, // a cancellation reason: an item too large, a bad update
	"ValidationException":             true,
	"ItemCollectionSizeLimitExceeded": true,
}

// classify decides what a TransactWriteItems answer means. recordIndex is the position of
// the idempotency record's Put in the transaction, heldIndex that of the group's hold write
// (-1 when there is none).
func classify(err error, recordIndex, heldIndex int) verdict {
	if err == nil {
		return verdict{kind: committed}
	}
	var tce *types.TransactionCanceledException
	if errors.As(err, &tce) {
		return classifyReasons(tce.CancellationReasons, recordIndex, heldIndex)
	}
	if denied.Is(err) {
		return verdict{kind: refusedAccess}
	}
	var api smithy.APIError
	if errors.As(err, &api) && permanentCodes[api.ErrorCode()] {
		return verdict{kind: permanent}
	}
	// Throttling, 5xx, network errors, cancelled contexts, and anything unknown: a
	// redelivery may succeed, and failing the message loses nothing.
	return verdict{kind: transient}
}

func classifyReasons(reasons []types.CancellationReason, recordIndex, heldIndex int) verdict {
	v := verdict{}
	if heldIndex >= 0 && heldIndex < len(reasons) {
		switch code := aws.ToString(reasons[heldIndex].Code); code {
		case "ConditionalCheckFailed":
			v.holdHeld, v.hold = true, reasons[heldIndex].Item
		case "", "None":
			v.holdFree = true
		}
	}
	if recordIndex < len(reasons) && aws.ToString(reasons[recordIndex].Code) == "ConditionalCheckFailed" {
		v.kind, v.old = recordExists, reasons[recordIndex].Item
		return v
	}
	var failed []int
	retry, refused := false, false
	for i, r := range reasons {
		code := aws.ToString(r.Code)
		switch {
		case i == heldIndex && code == "ConditionalCheckFailed":
			return verdict{kind: held, old: r.Item}
		case code == "ConditionalCheckFailed":
			failed = append(failed, i)
		case transientCodes[code]:
			retry = true
		case permanentCodes[code]:
			refused = true
		}
	}
	switch {
	case retry:
		return verdict{kind: transient} // a condition read during a conflict may be stale
	case len(failed) > 0:
		v.kind, v.index, v.failed, v.reasons = effectFailed, failed[0], failed, reasons
		return v
	case refused:
		return verdict{kind: permanent}
	default:
		return verdict{kind: transient}
	}
}

// refused reports whether DynamoDB refused a request as such (ValidationException): the same
// request can never succeed.
func refused(err error) bool {
	var api smithy.APIError
	return errors.As(err, &api) && api.ErrorCode() == "ValidationException"
}

// tooLarge reports whether err is DynamoDB refusing an item over its size limit.
func tooLarge(err error) bool {
	var api smithy.APIError
	return errors.As(err, &api) && api.ErrorCode() == "ValidationException" && strings.Contains(strings.ToLower(api.ErrorMessage()), "size")
}
