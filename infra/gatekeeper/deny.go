package gatekeeper

import (
	"encoding/json"
	"encoding/xml"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/onceflow/onceflow/infra/iam"
)

// The services the gatekeeper stands in front of, as SigV4 credential scopes name them
// (DynamoDB Streams signs as dynamodb).
const (
	dynamodbService = "dynamodb"
	sqsService      = "sqs"
	s3Service       = "s3"
	kinesisService  = "kinesis"
	ssmService      = "ssm"
)

// refusal is why a call is refused before any policy is read.
type refusal int

const (
	accessDenied refusal = iota // a policy refused it
	unknownKey                  // no principal has the access key id
	unsigned                    // the request carries no SigV4 credential
)

// deniedMessage is the message AWS gives a refused authorisation; SQS lower-cases the action,
// S3 quotes the resource.
func deniedMessage(service, principalARN string, r iam.Request, explicit bool) string {
	action, resource := r.Action, r.Resource
	switch service {
	case sqsService:
		action = strings.ToLower(action)
	case s3Service:
		resource = `"` + resource + `"`
	}
	why := "because no identity-based policy allows the " + action + " action"
	if explicit {
		why = "with an explicit deny in an identity-based policy"
	}
	return fmt.Sprintf("User: %s is not authorized to perform: %s on resource: %s %s", principalARN, action, resource, why)
}

// refuse answers a refused call as its service answers it: status, error code and message.
func refuse(w http.ResponseWriter, r *http.Request, service string, why refusal, message string) {
	id := fmt.Sprintf("gatekeeper-%d", time.Now().UnixNano())
	switch service {
	case dynamodbService, kinesisService, ssmService:
		code := map[refusal]string{accessDenied: "AccessDeniedException", unknownKey: "UnrecognizedClientException",
			unsigned: "MissingAuthenticationTokenException"}[why]
		if why == unknownKey {
			message = "The security token included in the request is invalid."
		}
		if why == unsigned {
			message = "Request is missing Authentication Token"
		}
		typ, ctype := code, "application/x-amz-json-1.1"
		if service == dynamodbService {
			typ, ctype = "com.amazon.coral.service#"+code, "application/x-amz-json-1.0"
		}
		writeJSONError(w, http.StatusBadRequest, ctype, id, typ, message, "")
	case sqsService:
		code := map[refusal]string{accessDenied: "AccessDenied", unknownKey: "InvalidClientTokenId", unsigned: "MissingAuthenticationToken"}[why]
		if why == unknownKey {
			message = "The security token included in the request is invalid."
		}
		if why == unsigned {
			message = "Request is missing Authentication Token"
		}
		if r.Header.Get("X-Amz-Target") != "" { // the JSON protocol
			writeJSONError(w, http.StatusForbidden, "application/x-amz-json-1.0", id,
				"com.amazon.coral.service#"+code+"Exception", message, code+";Sender")
			return
		}
		writeXML(w, http.StatusForbidden, id, sqsErrorResponse{Error: sqsError{Type: "Sender", Code: code, Message: message}, RequestID: id})
	default: // S3
		code := map[refusal]string{accessDenied: "AccessDenied", unknownKey: "InvalidAccessKeyId", unsigned: "AccessDenied"}[why]
		if why == unknownKey {
			message = "The AWS Access Key Id you provided does not exist in our records."
		}
		if why == unsigned {
			message = "Access Denied"
		}
		if r.Method == http.MethodHead { // S3 answers a HEAD with the status alone
			w.Header().Set("X-Amz-Request-Id", id)
			w.WriteHeader(http.StatusForbidden)
			return
		}
		writeXML(w, http.StatusForbidden, id, s3Error{Code: code, Message: message, RequestID: id, HostID: id})
	}
}

func writeJSONError(w http.ResponseWriter, status int, ctype, id, typ, message, queryError string) {
	w.Header().Set("Content-Type", ctype)
	w.Header().Set("X-Amzn-Requestid", id)
	if queryError != "" {
		w.Header().Set("X-Amzn-Query-Error", queryError)
	}
	b, _ := json.Marshal(map[string]string{"__type": typ, "message": message})
	w.WriteHeader(status)
	_, _ = w.Write(b)
}

type sqsError struct {
	Type    string `xml:"Type"`
	Code    string `xml:"Code"`
	Message string `xml:"Message"`
}

type sqsErrorResponse struct {
	XMLName   xml.Name `xml:"ErrorResponse"`
	Error     sqsError `xml:"Error"`
	RequestID string   `xml:"RequestId"`
}

type s3Error struct {
	XMLName   xml.Name `xml:"Error"`
	Code      string   `xml:"Code"`
	Message   string   `xml:"Message"`
	RequestID string   `xml:"RequestId"`
	HostID    string   `xml:"HostId"`
}

func writeXML(w http.ResponseWriter, status int, id string, v any) {
	b, _ := xml.Marshal(v)
	w.Header().Set("Content-Type", "application/xml")
	w.Header().Set("X-Amz-Request-Id", id)
	w.Header().Set("X-Amzn-Requestid", id)
	w.WriteHeader(status)
	_, _ = w.Write(append([]byte(xml.Header), b...))
}
