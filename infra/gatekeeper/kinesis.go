package gatekeeper

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"github.com/onceflow/onceflow/infra/iam"
)

type kinesisRequest struct {
	StreamName, StreamARN, ShardIterator, NextToken, ConsumerARN, ConsumerName string
}

// consumerActions are the Kinesis actions on an enhanced fan-out consumer, authorised on the
// consumer's ARN (arn:aws:kinesis:<region>:<account>:stream/<name>/consumer/<consumer>:<time>),
// as the service authorization reference lists them.
var consumerActions = map[string]bool{"DescribeStreamConsumer": true, "SubscribeToShard": true, "DeregisterStreamConsumer": true}

// kinesisRequests names the authorisation of a Kinesis call: kinesis:<op> on the stream it
// names, by name or ARN; a GetRecords on the stream its shard iterator came from, and a
// ListShards continuation on its token's, as the gatekeeper saw them handed out (an iterator
// it did not see is authorised on "*": only a policy on every stream allows it); a consumer's
// action on the consumer, by its ARN, or by its stream and name with its creation time "*".
func (g *Gatekeeper) kinesisRequests(r *http.Request, body []byte) ([]iam.Request, error) {
	op := target(r)
	var in kinesisRequest
	if len(body) > 0 {
		if err := json.Unmarshal(body, &in); err != nil {
			return nil, fmt.Errorf("kinesis %s: %w", op, err)
		}
	}
	resource := g.kinesisStream(in)
	if consumerActions[op] {
		resource = in.ConsumerARN
		if resource == "" {
			resource = g.kinesisStream(in) + "/consumer/" + in.ConsumerName + ":*"
		}
	}
	return []iam.Request{{Action: "kinesis:" + op, Resource: resource}}, nil
}

func (g *Gatekeeper) kinesisStream(in kinesisRequest) string {
	switch {
	case in.StreamARN != "":
		return in.StreamARN
	case in.StreamName != "":
		return fmt.Sprintf("arn:aws:kinesis:%s:%s:stream/%s", g.cfg.Region, g.cfg.Account, in.StreamName)
	case in.ConsumerARN != "": // arn:aws:kinesis:...:stream/<name>/consumer/<consumer>:<time>
		stream, _, _ := strings.Cut(in.ConsumerARN, "/consumer/")
		return stream
	case in.ShardIterator != "":
		return g.tokens.stream(in.ShardIterator)
	case in.NextToken != "":
		return g.tokens.stream(in.NextToken)
	}
	return "*"
}
