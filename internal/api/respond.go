package api

import (
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/aws/aws-lambda-go/events"
)

// errorBody is the JSON body of every error response.
type errorBody struct {
	Error string `json:"error"`
	Field string `json:"field,omitempty"`
}

// fieldError is a client error about one field of the request.
type fieldError struct {
	status  int
	field   string
	message string
}

func (e *fieldError) Error() string { return fmt.Sprintf("%s: %s", e.field, e.message) }

func badField(field, format string, args ...any) *fieldError {
	return &fieldError{status: http.StatusBadRequest, field: field, message: fmt.Sprintf(format, args...)}
}

func respond(status int, v any) events.APIGatewayV2HTTPResponse {
	body, err := json.Marshal(v)
	if err != nil {
		status, body = http.StatusInternalServerError, []byte(`{"error":"internal error"}`)
	}
	return events.APIGatewayV2HTTPResponse{StatusCode: status, Body: string(body),
		Headers: map[string]string{"Content-Type": "application/json"}}
}

func respondError(status int, message string) events.APIGatewayV2HTTPResponse {
	return respond(status, errorBody{Error: message})
}

func respondField(e *fieldError) events.APIGatewayV2HTTPResponse {
	return respond(e.status, errorBody{Error: e.Error(), Field: e.field})
}
