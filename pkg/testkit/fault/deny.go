package fault

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"hash/crc32"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/onceflow/onceflow/pkg/testkit"
)

// Deny is one permission a DenyProxy takes away: every request that needs Action (as IAM names
// it: dynamodb:ConditionCheckItem, sqs:SendMessage, s3:GetObject; case does not matter) is
// answered as AWS answers a caller that lacks it, when the item's partition key ("pk", each
// item of a transaction by its own action), the S3 object's key or the queue's name starts
// with Prefix ("" for any).
type Deny struct {
	Action string
	Prefix string
	// QueryError, for SQS: the denial carries the header of SQS's query-compatible JSON
	// protocol (x-amzn-query-error: AccessDenied;Sender), so the SDK reports the code
	// AccessDenied, as the query protocol says it; without it the code is AccessDeniedException.
	QueryError bool
}

// Principal is the caller a DenyProxy's denials name, as AWS names a Lambda function's role.
const Principal = "arn:aws:sts::000000000000:assumed-role/test-function-role/test-function"

// DenyProxy is an HTTP proxy in front of an emulator (DynamoDB Local, or fauxqs for SQS and
// S3) that forwards every request but those a Deny matches, which it answers itself with the
// status, headers, error code and message AWS sends for an access denial: the component under
// test talks to the real emulator through it, and only IAM is played. It is safe for
// concurrent use.
type DenyProxy struct {
	URL string

	mu     sync.Mutex
	deny   []Deny
	denied map[string]int // action (lower case) → requests denied
	calls  []Call
}

// NewDenyProxy starts a DenyProxy in front of target (an emulator's URL) denying what denials
// say; it stops when the test ends.
func NewDenyProxy(tb testing.TB, target string, denials ...Deny) *DenyProxy {
	tb.Helper()
	u, err := url.Parse(target)
	if err != nil {
		tb.Fatalf("deny proxy target %q: %v", target, err)
	}
	p := &DenyProxy{deny: denials, denied: map[string]int{}}
	forward := reverseProxy(u)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		calls := classifyRequest(r, body)
		p.record(r, calls)
		if c, ok := p.match(calls); ok {
			p.answer(w, r, c)
			return
		}
		forward.ServeHTTP(w, r)
	}))
	tb.Cleanup(srv.Close)
	p.URL = srv.URL
	return p
}

// Set replaces what the proxy denies (none: every request goes through, as after the
// permission is granted).
func (p *DenyProxy) Set(denials ...Deny) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.deny = denials
}

// Denied returns how many requests needing action the proxy has denied.
func (p *DenyProxy) Denied(action string) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.denied[strings.ToLower(action)]
}

// call is one authorisation a request needs: an IAM action on a resource, keyed.
type call struct {
	service  string // dynamodb, sqs, s3
	action   string // as IAM names it
	resource string // its ARN
	key      string // the item's partition key, the object's key, the queue's name
}

// Call is one authorisation a request through the proxy needed, as IAM would read it.
type Call struct {
	Action    string // as IAM names it: dynamodb:PutItem (each item of a transaction), sqs:SendMessage (a batch too)
	Resource  string // the ARN, in the local cloud's account 000000000000 and us-east-1
	Key       string // the item's partition key (dynamodb:LeadingKeys), the object's key, the queue's name
	AccessKey string // the access key id the request was signed with
	Session   string // its session token (X-Amz-Security-Token), if any
}

// Calls returns every authorisation the requests through the proxy needed, in order, denied
// or not.
func (p *DenyProxy) Calls() []Call {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]Call(nil), p.calls...)
}

// signer matches the access key id of a SigV4 Authorization header.
var signer = regexp.MustCompile(`Credential=([^/,\s]+)/`)

func (p *DenyProxy) record(r *http.Request, calls []call) {
	var key string
	if m := signer.FindStringSubmatch(r.Header.Get("Authorization")); m != nil {
		key = m[1]
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range calls {
		p.calls = append(p.calls, Call{Action: c.action, Resource: c.resource, Key: c.key, AccessKey: key,
			Session: r.Header.Get("X-Amz-Security-Token")})
	}
}

func (p *DenyProxy) match(calls []call) (deniedCall, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range calls {
		for _, d := range p.deny {
			if strings.EqualFold(d.Action, c.action) && strings.HasPrefix(c.key, d.Prefix) {
				p.denied[strings.ToLower(c.action)]++
				return deniedCall{call: c, queryError: d.QueryError}, true
			}
		}
	}
	return deniedCall{}, false
}

type deniedCall struct {
	call
	queryError bool
}

// classifyRequest returns what a request needs authorised, as IAM reads it: per item inside a
// DynamoDB transaction, per action for SQS's batch calls, by method and path for S3.
func classifyRequest(r *http.Request, body []byte) []call {
	target := r.Header.Get("X-Amz-Target")
	switch {
	case strings.HasPrefix(target, "DynamoDB_"):
		return dynamoCalls(strings.TrimPrefix(target[strings.Index(target, "."):], "."), body)
	case strings.HasPrefix(target, "AmazonSQS."):
		return sqsCalls(strings.TrimPrefix(target, "AmazonSQS."), body)
	case target == "":
		return s3Calls(r)
	}
	return nil
}

// dynamoItem is what the proxy reads of a DynamoDB request or transaction item.
type dynamoItem struct {
	TableName string
	Key, Item map[string]map[string]any
}

func (i dynamoItem) call(action string) call {
	pk := i.Key["pk"]
	if pk == nil {
		pk = i.Item["pk"]
	}
	s, _ := pk["S"].(string)
	return call{service: "dynamodb", action: "dynamodb:" + action, key: s,
		resource: "arn:aws:dynamodb:us-east-1:000000000000:table/" + i.TableName}
}

func dynamoCalls(op string, body []byte) []call {
	if op != "TransactWriteItems" {
		var in dynamoItem
		_ = json.Unmarshal(body, &in)
		return []call{in.call(op)}
	}
	var in struct {
		TransactItems []struct{ Put, Update, Delete, ConditionCheck *dynamoItem }
	}
	_ = json.Unmarshal(body, &in)
	var out []call
	for _, it := range in.TransactItems {
		switch {
		case it.Put != nil:
			out = append(out, it.Put.call("PutItem"))
		case it.Update != nil:
			out = append(out, it.Update.call("UpdateItem"))
		case it.Delete != nil:
			out = append(out, it.Delete.call("DeleteItem"))
		case it.ConditionCheck != nil:
			out = append(out, it.ConditionCheck.call("ConditionCheckItem"))
		}
	}
	return out
}

func sqsCalls(op string, body []byte) []call {
	var in struct{ QueueUrl, QueueName string }
	_ = json.Unmarshal(body, &in)
	name := in.QueueName
	if in.QueueUrl != "" {
		name = in.QueueUrl[strings.LastIndex(in.QueueUrl, "/")+1:]
	}
	// SQS authorises a batch call as the action of its entries.
	action := strings.TrimSuffix(op, "Batch")
	return []call{{service: "sqs", action: "sqs:" + action, key: name, resource: "arn:aws:sqs:us-east-1:000000000000:" + name}}
}

func s3Calls(r *http.Request) []call {
	bucket, key, _ := strings.Cut(strings.TrimPrefix(r.URL.Path, "/"), "/")
	if bucket == "" {
		return nil
	}
	action, res := "s3:ListBucket", "arn:aws:s3:::"+bucket
	if key != "" {
		res += "/" + key
		switch r.Method {
		case http.MethodGet, http.MethodHead:
			action = "s3:GetObject"
		case http.MethodPut, http.MethodPost:
			action = "s3:PutObject"
		case http.MethodDelete:
			action = "s3:DeleteObject"
		}
	}
	return []call{{service: "s3", action: action, key: key, resource: res}}
}

// answer writes AWS's answer to a denied call: DynamoDB's AccessDeniedException (400, JSON,
// with the x-amz-crc32 DynamoDB sends), SQS's in its JSON protocol (400; the query error
// header when asked), S3's AccessDenied (403, XML). The message is IAM's, naming the principal,
// the action and the resource; SQS writes the action in lower case, S3 quotes the resource.
func (p *DenyProxy) answer(w http.ResponseWriter, r *http.Request, c deniedCall) {
	action, resource := c.action, c.resource
	switch c.service {
	case "sqs":
		action = strings.ToLower(action)
	case "s3":
		resource = `"` + resource + `"`
	}
	msg := fmt.Sprintf("User: %s is not authorized to perform: %s on resource: %s because no identity-based policy allows the %s action",
		Principal, action, resource, action)
	h := w.Header()
	h.Set("X-Amzn-RequestId", "denied-by-test-proxy")
	switch c.service {
	case "dynamodb":
		body, _ := json.Marshal(map[string]string{"__type": "com.amazon.coral.service#AccessDeniedException", "Message": msg})
		h.Set("Content-Type", "application/x-amz-json-1.0")
		h.Set("X-Amz-Crc32", fmt.Sprint(crc32.ChecksumIEEE(body)))
		w.WriteHeader(http.StatusBadRequest)
		_, _ = w.Write(body)
	case "sqs":
		body, _ := json.Marshal(map[string]string{"__type": "com.amazon.coral.access#AccessDeniedException", "message": msg})
		h.Set("Content-Type", "application/x-amz-json-1.0")
		if c.queryError {
			h.Set("X-Amzn-Query-Error", "AccessDenied;Sender")
		}
		w.WriteHeader(http.StatusBadRequest)
		_, _ = w.Write(body)
	default:
		var b bytes.Buffer
		b.WriteString(`<?xml version="1.0" encoding="UTF-8"?>` + "\n<Error><Code>AccessDenied</Code><Message>")
		_ = xml.EscapeText(&b, []byte(msg))
		b.WriteString("</Message><RequestId>denied-by-test-proxy</RequestId><HostId>test</HostId></Error>")
		h.Set("Content-Type", "application/xml")
		w.WriteHeader(http.StatusForbidden)
		if r.Method != http.MethodHead {
			_, _ = w.Write(b.Bytes())
		}
	}
}

// DynamoDBDenying returns a client of DynamoDB Local through a new DenyProxy denying what
// denials say, and the proxy.
func DynamoDBDenying(tb testing.TB, denials ...Deny) (*dynamodb.Client, *DenyProxy) {
	tb.Helper()
	p := NewDenyProxy(tb, testkit.Emulator(tb, testkit.EndpointVariable), denials...)
	return testkit.DynamoDB(tb, func(o *dynamodb.Options) { o.BaseEndpoint = aws.String(p.URL) }), p
}

// SQSDenying returns a client of fauxqs's SQS through a new DenyProxy, and the proxy.
func SQSDenying(tb testing.TB, denials ...Deny) (*sqs.Client, *DenyProxy) {
	tb.Helper()
	p := NewDenyProxy(tb, testkit.Emulator(tb, testkit.SQSEndpointVariable), denials...)
	return testkit.SQS(tb, func(o *sqs.Options) { o.BaseEndpoint = aws.String(p.URL) }), p
}

// S3Denying returns a client of fauxqs's S3 (path-style) through a new DenyProxy, and the proxy.
func S3Denying(tb testing.TB, denials ...Deny) (*s3.Client, *DenyProxy) {
	tb.Helper()
	p := NewDenyProxy(tb, testkit.Emulator(tb, testkit.SQSEndpointVariable), denials...)
	return testkit.S3Client(tb, func(o *s3.Options) { o.BaseEndpoint = aws.String(p.URL) }), p
}
