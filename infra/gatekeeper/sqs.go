package gatekeeper

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/onceflow/onceflow/infra/iam"
)

// sqsBatches are the SQS batch operations, each authorised as the action of its entries.
var sqsBatches = map[string]string{
	"SendMessageBatch":             "SendMessage",
	"DeleteMessageBatch":           "DeleteMessage",
	"ChangeMessageVisibilityBatch": "ChangeMessageVisibility",
}

// sqsRequests names the authorisation of an SQS call, in the JSON protocol (X-Amz-Target
// AmazonSQS.<op>, parameters in the body) or the query protocol (form parameters, the queue's
// URL in QueueUrl or as the request's path): sqs:<op> (a batch as its entries' action) on the
// queue's ARN, "*" for the calls on no queue.
func (g *Gatekeeper) sqsRequests(r *http.Request, body []byte) ([]iam.Request, error) {
	var in struct {
		QueueUrl, QueueName, QueueOwnerAWSAccountId, SourceArn, TaskHandle string
	}
	op := target(r)
	if op != "" {
		if len(body) > 0 {
			if err := json.Unmarshal(body, &in); err != nil {
				return nil, fmt.Errorf("sqs %s: %w", op, err)
			}
		}
	} else {
		form, err := url.ParseQuery(string(body))
		if err != nil {
			return nil, fmt.Errorf("sqs: query protocol: %w", err)
		}
		for k, v := range r.URL.Query() {
			if _, ok := form[k]; !ok {
				form[k] = v
			}
		}
		op = form.Get("Action")
		in.QueueUrl, in.QueueName, in.QueueOwnerAWSAccountId = form.Get("QueueUrl"), form.Get("QueueName"), form.Get("QueueOwnerAWSAccountId")
		in.SourceArn = form.Get("SourceArn")
		if in.QueueUrl == "" && strings.Count(strings.Trim(r.URL.Path, "/"), "/") == 1 {
			in.QueueUrl = r.URL.Path // a query request to the queue's own URL
		}
		if op == "" {
			return nil, fmt.Errorf("sqs: no Action in the query protocol request")
		}
	}
	action := op
	if a, ok := sqsBatches[op]; ok {
		action = a
	}
	account := in.QueueOwnerAWSAccountId
	if account == "" {
		account = g.cfg.Account
	}
	var resource string
	switch {
	case in.QueueUrl != "":
		p := strings.Split(strings.Trim(pathOf(in.QueueUrl), "/"), "/")
		if len(p) < 2 {
			return nil, fmt.Errorf("sqs %s: queue URL %q names no account and queue", op, in.QueueUrl)
		}
		resource = fmt.Sprintf("arn:aws:sqs:%s:%s:%s", g.cfg.Region, p[len(p)-2], p[len(p)-1])
	case in.QueueName != "":
		resource = fmt.Sprintf("arn:aws:sqs:%s:%s:%s", g.cfg.Region, account, in.QueueName)
	case in.SourceArn != "":
		resource = in.SourceArn
	default:
		resource = "*" // ListQueues, ListMessageMoveTasks by task handle, ...
	}
	return []iam.Request{{Action: "sqs:" + action, Resource: resource}}, nil
}

// pathOf is the path of a URL, or the string itself when it is a path.
func pathOf(s string) string {
	if u, err := url.Parse(s); err == nil && u.Path != "" {
		return u.Path
	}
	return s
}
