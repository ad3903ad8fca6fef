package localcloud

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/lambda"
	smithyhttp "github.com/aws/smithy-go/transport/http"

	"github.com/onceflow/onceflow/pkg/xray"
)

// Invoker invokes a function synchronously and returns its response payload. A failed
// function (error returned, panic, timeout, crashed environment) is a *FunctionError; any
// other error means the invocation could not be made. Implementations are safe for
// concurrent use.
type Invoker interface {
	Invoke(ctx context.Context, function string, payload []byte) ([]byte, error)
}

// FunctionError is an invocation whose function failed.
type FunctionError struct {
	Function string
	Type     string // errorType of the function's error, or "Timeout", "Crash"
	Message  string
	Payload  []byte // the raw error payload, when there is one
}

func (e *FunctionError) Error() string {
	return fmt.Sprintf("function %s failed: %s: %s", e.Function, e.Type, e.Message)
}

// LambdaAPI invokes through the Lambda Invoke API at an endpoint: the local cloud's own
// LambdaURL, or `sam local start-lambda`. Names maps a logical id to the FunctionName to send
// (default: the logical id itself).
type LambdaAPI struct {
	Client *lambda.Client // built with RetryMaxAttempts 1, as Endpoints.LambdaClient does
	Names  map[string]string
}

// NewLambdaAPI returns a LambdaAPI for the Lambda Invoke API at endpoint, one attempt per invoke.
func NewLambdaAPI(endpoint string) *LambdaAPI {
	return &LambdaAPI{Client: newLambdaClient(endpoint)}
}

// Invoke implements Invoker.
func (l *LambdaAPI) Invoke(ctx context.Context, function string, payload []byte) ([]byte, error) {
	name := function
	if n, ok := l.Names[function]; ok {
		name = n
	}
	return invokeVia(ctx, l.Client, function, name, payload)
}

// invokeVia calls Invoke and turns every way a function can fail into a *FunctionError. The
// trace header of ctx (see xray.NewContext) goes with the request as X-Amzn-Trace-Id, which
// the Lambda Invoke API and the Runtime Interface Emulator take as the invocation's trace: the
// emulator hands it to the runtime as Lambda-Runtime-Trace-Id, and aws-lambda-go puts it in
// the handler's context and _X_AMZN_TRACE_ID.
func invokeVia(ctx context.Context, client *lambda.Client, function, name string, payload []byte) ([]byte, error) {
	var opts []func(*lambda.Options)
	if h := xray.FromContext(ctx); h != "" {
		opts = append(opts, func(o *lambda.Options) {
			o.APIOptions = append(o.APIOptions, smithyhttp.SetHeaderValue(xray.HTTPHeader, h))
		})
	}
	out, err := client.Invoke(ctx, &lambda.InvokeInput{FunctionName: aws.String(name), Payload: payload}, opts...)
	if err != nil {
		return nil, err
	}
	if fe := functionError(function, aws.ToString(out.FunctionError), out.Payload); fe != nil {
		return nil, fe
	}
	return out.Payload, nil
}

// functionError recognises a failed invocation in an answer of the Runtime Interface Emulator,
// which sets no X-Amz-Function-Error for a timeout or a panic.
func functionError(function, header string, payload []byte) *FunctionError {
	if bytes.HasPrefix(payload, []byte("Task timed out")) {
		return &FunctionError{Function: function, Type: "Timeout", Message: string(payload), Payload: payload}
	}
	var e struct {
		ErrorMessage *string `json:"errorMessage"`
		ErrorType    string  `json:"errorType"`
	}
	isErr := json.Unmarshal(payload, &e) == nil && e.ErrorMessage != nil && e.ErrorType != ""
	if header == "" && !isErr {
		return nil
	}
	return &FunctionError{Function: function, Type: e.ErrorType, Message: aws.ToString(e.ErrorMessage), Payload: payload}
}

// IsFunctionError reports whether err is a failed function, as opposed to a failed call.
func IsFunctionError(err error) bool {
	var fe *FunctionError
	return errors.As(err, &fe)
}
