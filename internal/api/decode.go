package api

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"maps"
	"regexp"
	"slices"
	"strings"

	"github.com/aws/aws-lambda-go/events"

	"github.com/onceflow/onceflow/pkg/outbox"
)

// idPattern is what note and account ids in paths look like; they become keys and
// MessageGroupIds.
var idPattern = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)

var unknownField = regexp.MustCompile(`unknown field "([^"]*)"`)

// decodeBody decodes the request's JSON object body into v, rejecting unknown fields and
// trailing data, and names the field at fault.
func decodeBody(req events.APIGatewayV2HTTPRequest, v any) *fieldError {
	body := []byte(req.Body)
	if req.IsBase64Encoded {
		b, err := base64.StdEncoding.DecodeString(req.Body)
		if err != nil {
			return badField("body", "is not valid base64")
		}
		body = b
	}
	if len(bytes.TrimSpace(body)) == 0 {
		return badField("body", "missing; want a JSON object")
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		var typeErr *json.UnmarshalTypeError
		switch m := unknownField.FindStringSubmatch(err.Error()); {
		case errors.As(err, &typeErr) && typeErr.Field != "":
			return badField(typeErr.Field, "is a JSON %s; want %s", typeErr.Value, jsonKind(typeErr.Type.Kind().String()))
		case m != nil:
			return badField(m[1], "is not a known field")
		default:
			return badField("body", "is not a JSON object: %v", err)
		}
	}
	if _, err := dec.Token(); err != io.EOF {
		return badField("body", "has data after the JSON object")
	}
	return nil
}

func jsonKind(goKind string) string {
	switch {
	case strings.HasPrefix(goKind, "int"):
		return "an integer"
	case goKind == "string":
		return "a string"
	}
	return goKind
}

// header returns the value of the named header, matched case-insensitively (HTTP APIs
// lower-case header names, other sources may not).
func header(req events.APIGatewayV2HTTPRequest, name string) (string, bool) {
	for k, v := range req.Headers {
		if strings.EqualFold(k, name) {
			return v, true
		}
	}
	return "", false
}

// sendable names the first field (in name order) whose text SQS would refuse in the message
// that carries the event: its text must be refused here, not accepted and then unpublishable.
func sendable(fields map[string]string) *fieldError {
	for _, name := range slices.Sorted(maps.Keys(fields)) {
		if err := outbox.CheckText(fields[name]); err != nil {
			return badField(name, "%v", err)
		}
	}
	return nil
}
