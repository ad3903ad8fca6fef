package idempotency

import (
	"errors"
	"strings"

	"github.com/aws/smithy-go"
)

// ErrHoldFull is matched by the error of a hold write DynamoDB refused because an item would
// exceed its size limit (400 KB). A held list spreads over pages and never does; the hold's own
// item also keeps the operators' skips (for DefaultRetention), which could. It is not retried:
// the message fails, is logged at error level naming the group, and is not dead-lettered
// unheld (see docs/failure-path.md).
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
