package denied

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"regexp"
	"strings"

	"github.com/aws/smithy-go"

	"github.com/onceflow/onceflow/pkg/metrics"
)

// deniedCodes are the error codes AWS answers a call with when IAM (or a key policy behind the
// service) does not allow it: DynamoDB, Kinesis, SSM and KMS say AccessDeniedException; S3
// and SQS in its query protocol say AccessDenied, as the SDK reports SQS's JSON protocol too
// when the response carries the query-compatible error header (without it the code is
// AccessDeniedException); SQS names a denial of its queue's KMS key KmsAccessDenied
// (KMS.AccessDeniedException in the query protocol), Kinesis KMSAccessDeniedException.
// Credentials that are missing, expired or unknown are other codes: not a denial.
var deniedCodes = map[string]bool{
	"AccessDeniedException":     true,
	"AccessDenied":              true,
	"KmsAccessDenied":           true,
	"KMS.AccessDeniedException": true,
	"KMSAccessDeniedException":  true,
}

// deniedMessage reads IAM's message: "User: <principal> is not authorized to perform: <action>
// on resource: <arn> because ..." (S3 quotes the resource; SQS writes its actions in lower
// case, as in sqs:sendmessage).
var deniedMessage = regexp.MustCompile(`User: (\S+) is not authorized to perform: (\S+)(?: on resource: "?([^"\s]+)"?)?`)

// AccessDenied is an AWS call refused for want of a permission: the deployment's fault, never
// the message's. The engine does not count it against the message's failures, never
// dead-letters the message or holds its group for it, and leaves the message for
// redelivery (a batch item failure), so that it is applied once the permission is granted;
// the queue's own maxReceiveCount still moves a message that is never fixed. Of finds one in
// any error.
type AccessDenied struct {
	Service   string // the SDK's service id (DynamoDB, SQS, S3), when the error says
	Operation string // the API operation (TransactWriteItems), when the error says
	Code      string // AWS's error code (AccessDeniedException, AccessDenied)
	Principal string // who was refused, when AWS's message names it
	Action    string // the permission missing, as AWS's message names it (dynamodb:ConditionCheckItem)
	Resource  string // the resource it is missing on, as AWS's message names it
	Message   string // AWS's message
	err       error
}

func (d *AccessDenied) Error() string {
	return fmt.Sprintf("access denied (%s): %s is missing %s; grant it to the caller's role, then the message is applied on its next delivery",
		d.Code, orCaller(d.Principal), d.Permission())
}

// Unwrap returns the AWS error.
func (d *AccessDenied) Unwrap() error { return d.err }

// Is makes errors.Is(err, ErrAccessDenied) true.
func (d *AccessDenied) Is(target error) bool { return target == ErrAccessDenied }

// Permission names what is missing: "<action> on <resource>" from AWS's message, or, when the
// message names no action (S3's older "Access Denied", SQS's "Access to the resource … is
// denied"), the operation that was refused.
func (d *AccessDenied) Permission() string {
	switch {
	case d.Action != "" && d.Resource != "":
		return d.Action + " on " + d.Resource
	case d.Action != "":
		return d.Action
	case d.Operation != "":
		return fmt.Sprintf("the permission %s %s needs (AWS's message names none: %q)", d.Service, d.Operation, d.Message)
	}
	return fmt.Sprintf("a permission (AWS's message names none: %q)", d.Message)
}

func orCaller(p string) string {
	if p == "" {
		return "the caller"
	}
	return p
}

// Of returns the access denial err carries, if any: an AccessDenied in its chain, or an
// AWS error whose code is a denial's (the SDK's smithy.APIError), read with the service and
// operation of the call (smithy.OperationError) and the principal, action and resource AWS's
// message names.
func Of(err error) (*AccessDenied, bool) {
	if err == nil {
		return nil, false
	}
	var d *AccessDenied
	if errors.As(err, &d) {
		return d, true
	}
	var api smithy.APIError
	if !errors.As(err, &api) || !deniedCodes[api.ErrorCode()] {
		return nil, false
	}
	d = &AccessDenied{Code: api.ErrorCode(), Message: api.ErrorMessage(), err: err}
	var op *smithy.OperationError
	if errors.As(err, &op) {
		d.Service, d.Operation = op.ServiceID, op.OperationName
	}
	if m := deniedMessage.FindStringSubmatch(d.Message); m != nil {
		d.Principal, d.Action, d.Resource = m[1], strings.TrimSuffix(m[2], ","), m[3]
	}
	return d, true
}

// Is reports whether err carries an access denial (Of).
func Is(err error) bool {
	_, ok := Of(err)
	return ok
}

// Message is the message of the one log line a denial gets. Operators search logs for it and
// the stacks' alarms quote it (template.yaml): its words are a contract.
const Message = "AWS call denied: a permission is missing"

// ErrAccessDenied is matched by an AccessDenied.
var ErrAccessDenied = errors.New("access denied")

// Log logs d once, at ERROR, under Message with the permission it names, what was
// being done (doing: "commit", "dead-letter send", ...) and attrs, and counts
// metrics.AccessDenied on m: every port reports a denial so, where it decides what becomes of
// the message, and an alarm on the metric tells a person.
func Log(ctx context.Context, logger *slog.Logger, m metrics.Recorder, d *AccessDenied, doing string, attrs ...slog.Attr) {
	all := append([]slog.Attr{
		slog.String("permission", d.Action), slog.String("resource", d.Resource), slog.String("principal", d.Principal),
		slog.String("service", d.Service), slog.String("operation", d.Operation), slog.String("errorCode", d.Code),
		slog.String("during", doing), slog.String("missing", d.Permission()),
	}, attrs...)
	logger.LogAttrs(ctx, slog.LevelError, Message, all...)
	m.Count(metrics.AccessDenied, 1)
}
