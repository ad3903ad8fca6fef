package gatekeeper

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"github.com/onceflow/onceflow/infra/iam"
)

// ssmRequests names the authorisations of a Parameter Store call: ssm:<op> on each parameter
// it names (arn:aws:ssm:<region>:<account>:parameter/<name without its leading slash>), or on
// the path's parameters for GetParametersByPath.
func (g *Gatekeeper) ssmRequests(r *http.Request, body []byte) ([]iam.Request, error) {
	op := target(r)
	var in struct {
		Name  string
		Names []string
		Path  string
	}
	if len(body) > 0 {
		if err := json.Unmarshal(body, &in); err != nil {
			return nil, fmt.Errorf("ssm %s: %w", op, err)
		}
	}
	names := in.Names
	if in.Name != "" {
		names = append(names, in.Name)
	}
	if in.Path != "" {
		names = append(names, in.Path)
	}
	if len(names) == 0 {
		return []iam.Request{{Action: "ssm:" + op, Resource: "*"}}, nil // DescribeParameters
	}
	out := make([]iam.Request, 0, len(names))
	for _, n := range names {
		arn := n
		if !strings.HasPrefix(n, "arn:") {
			arn = fmt.Sprintf("arn:aws:ssm:%s:%s:parameter/%s", g.cfg.Region, g.cfg.Account, strings.TrimPrefix(n, "/"))
		}
		out = append(out, iam.Request{Action: "ssm:" + op, Resource: arn})
	}
	return out, nil
}
