package idempotency

import (
	"errors"
	"strings"

	"github.com/aws/smithy-go"
)

// ErrHoldFull is matched by the error of a hold write DynamoDB refused because the group's
// held list would exceed its item size limit (400 KB: some 1,000 held messages with ids of a
// hundred characters). It is not retried; the message fails, is logged at error level naming
// the group, and is left to the queue's redrive policy (the group stays held behind its
// blocker). See docs/failure-path.md.
var ErrHoldFull = errors.New("group's held list at DynamoDB's item size limit (400 KB)")

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
