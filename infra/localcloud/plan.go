package localcloud

import (
	"errors"
	"fmt"
	"strings"

	"github.com/onceflow/onceflow/infra/gatekeeper"
)

// newRefs returns the references of a cloud of cfg to the template's parameters, mappings,
// functions and managed policies; its resources are added as they are created (or planned).
func newRefs(tmpl *Template, cfg Config) (*refs, error) {
	r := &refs{functions: map[string]bool{}, params: parameters(tmpl.Parameters, cfg.Parameters), tables: map[string]Table{}, queues: map[string]Queue{},
		buckets: map[string]Bucket{}, kinesis: map[string]KinesisStream{}, policies: map[string]string{},
		prefix: cfg.Prefix, region: Region, account: Account, conds: conditions{decl: tmpl.Conditions}}
	var err error
	if r.mappings, err = mappings(tmpl); err != nil {
		return nil, err
	}
	for _, id := range tmpl.ManagedPolicies {
		r.policies[id] = fmt.Sprintf("arn:aws:iam::%s:policy/%s-%s", Account, cfg.Prefix, id)
	}
	for _, id := range tmpl.Functions {
		r.functions[id] = true
	}
	return r, nil
}

// streamLabel stands for the creation time in the ARN of a planned table stream.
const streamLabel = "1970-01-01T00:00:00.000"

// plannedRefs are the references of a cloud of cfg before anything exists: each resource with
// the name and ARN the cloud will give it (a table stream's creation time streamLabel).
func plannedRefs(tmpl *Template, cfg Config) (*refs, error) {
	r, err := newRefs(tmpl, cfg)
	if err != nil {
		return nil, err
	}
	for _, id := range tmpl.Tables {
		name := cfg.Prefix + "-" + id
		t := Table{Name: name, ARN: fmt.Sprintf("arn:aws:dynamodb:ddblocal:%s:table/%s", Account, name)}
		if lookup(tmpl.Properties[id], "StreamSpecification") != nil {
			t.StreamARN = t.ARN + "/stream/" + streamLabel
		}
		r.tables[id] = t
	}
	var errs []error
	for _, id := range tmpl.Queues {
		props, err := r.resolve(subset(tmpl.Properties[id], "FifoQueue"))
		if err != nil {
			errs = append(errs, fmt.Errorf("queue %s: %w", id, err))
			continue
		}
		name := cfg.Prefix + "-" + id
		if p, _ := props.(map[string]any); fmt.Sprint(p["FifoQueue"]) == "true" {
			name += ".fifo"
		}
		r.queues[id] = Queue{Name: name, URL: fmt.Sprintf("http://127.0.0.1/%s/%s", Account, name),
			ARN: fmt.Sprintf("arn:aws:sqs:%s:%s:%s", Region, Account, name)}
	}
	for _, id := range tmpl.Buckets {
		name := strings.ToLower(cfg.Prefix + "-" + id)
		r.buckets[id] = Bucket{Name: name, ARN: "arn:aws:s3:::" + name}
	}
	for _, id := range tmpl.Kinesis {
		props, err := r.resolve(subset(tmpl.Properties[id], "Name"))
		if err != nil {
			errs = append(errs, fmt.Errorf("kinesis stream %s: %w", id, err))
			continue
		}
		name := cfg.Prefix + "-" + id
		p, _ := props.(map[string]any)
		if n, _ := p["Name"].(string); n != "" {
			name = cfg.Prefix + "-" + n
		}
		r.kinesis[id] = KinesisStream{Name: name, ARN: fmt.Sprintf("arn:aws:kinesis:%s:%s:stream/%s", Region, Account, name)}
	}
	return r, errors.Join(errs...)
}

// Principals derives, without starting anything, the principals a cloud of cfg gives its
// gatekeeper: each function of cfg.Template with the role the SAM transform creates for it,
// each managed policy of the template as a role of its own, their policies resolved with the
// names and ARNs the cloud will give its resources (a table stream's creation time a
// placeholder). A policy the gatekeeper cannot decide as AWS does is an error naming the
// function or managed policy, the policy, the statement and the element: Start refuses such a
// template before it starts anything.
func Principals(cfg Config) ([]gatekeeper.Principal, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	tmpl, err := LoadTemplate(cfg.Template)
	if err != nil {
		return nil, err
	}
	return plannedPrincipals(tmpl, cfg)
}

func plannedPrincipals(tmpl *Template, cfg Config) ([]gatekeeper.Principal, error) {
	r, err := plannedRefs(tmpl, cfg)
	if err != nil {
		return nil, err
	}
	ps, _, err := derivePrincipals(cfg.Template, tmpl, r, cfg.Logger)
	return ps, err
}
