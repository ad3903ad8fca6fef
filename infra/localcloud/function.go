package localcloud

import (
	"fmt"
	"path/filepath"
	"strings"
)

// Event types of AWS::Serverless::Function the local cloud emulates.
const (
	EventSQS      = "SQS"
	EventDynamoDB = "DynamoDB"
	EventHTTPAPI  = "HttpApi"
)

// Function is an AWS::Serverless::Function with Globals applied and references resolved.
type Function struct {
	ID         string
	CodeDir    string // absolute directory of the Go main package (CodeUri)
	Timeout    int    // seconds
	MemorySize int    // MB
	Env        map[string]string
	Events     []Event
	LogFormat  string // LoggingConfig.LogFormat: Text or JSON
	LogLevel   string // LoggingConfig.ApplicationLogLevel
}

// Event is one event source of a function.
type Event struct {
	Name             string
	Type             string // EventSQS, EventDynamoDB or EventHTTPAPI
	Source           string // logical id of the queue or table
	SourceARN        string // queue ARN or stream ARN
	BatchSize        int
	StartingPosition string // TRIM_HORIZON or LATEST (streams)
	ReportFailures   bool   // FunctionResponseTypes has ReportBatchItemFailures
	Path, Method     string // HttpApi
	API              string // HttpApi: logical id of its ApiId, "" for the implicit API
	Authorizer       string // HttpApi: the event's own Auth.Authorizer ("NONE", a name), "" for the API's default
	Filter           filter // FilterCriteria
	MaxConcurrency   int    // ScalingConfig.MaximumConcurrency (SQS), 0 when unset
	MaxRetries       int    // MaximumRetryAttempts (streams), -1 for until success
	MaxRecordAge     int    // MaximumRecordAgeInSeconds (streams), -1 for no limit
	Bisect           bool   // BisectBatchOnFunctionError (streams)
	OnFailure        string // DestinationConfig.OnFailure.Destination (streams): a queue ARN
	// BatchingWindow is MaximumBatchingWindowInSeconds: how long a batch may gather records.
	BatchingWindow int
	// MinPollers and MaxPollers are ProvisionedPollerConfig's (SQS), 0 in on-demand mode.
	MinPollers, MaxPollers int
}

func (c *Cloud) function(id string) (*Function, error) {
	props, err := c.refs.resolve(functionSubset(c.tmpl.Properties[id]))
	if err != nil {
		return nil, fmt.Errorf("function %s: %w", id, err)
	}
	var p struct {
		CodeUri       any
		Timeout       int
		MemorySize    int
		Environment   struct{ Variables map[string]any }
		LoggingConfig struct {
			LogFormat           string
			ApplicationLogLevel string
		}
		Events map[string]struct {
			Type       string
			Properties map[string]any
		}
	}
	if err := remarshal(props, &p); err != nil {
		return nil, fmt.Errorf("function %s: properties: %w", id, err)
	}
	code, ok := p.CodeUri.(string)
	if !ok || code == "" {
		return nil, fmt.Errorf("function %s: CodeUri must be a local directory", id)
	}
	f := &Function{ID: id, CodeDir: filepath.Join(c.tmpl.Dir, code), Timeout: p.Timeout,
		MemorySize: p.MemorySize, Env: map[string]string{},
		LogFormat: p.LoggingConfig.LogFormat, LogLevel: p.LoggingConfig.ApplicationLogLevel}
	if f.Timeout <= 0 {
		f.Timeout = 3
	}
	if f.MemorySize <= 0 {
		f.MemorySize = 128
	}
	for k, v := range p.Environment.Variables {
		s, err := stringify(v)
		if err != nil {
			return nil, fmt.Errorf("function %s: environment %s: %w", id, k, err)
		}
		f.Env[k] = s
	}
	for _, name := range sortedKeys(p.Events) {
		ev, err := c.event(name, p.Events[name].Type, p.Events[name].Properties)
		if err != nil {
			return nil, fmt.Errorf("function %s: event %s: %w", id, name, err)
		}
		if ev == nil {
			continue
		}
		if ev.Type == EventHTTPAPI {
			raw := lookup(lookup(lookup(c.tmpl.Properties[id], "Events"), name), "Properties")
			ev.API = referencedResource(lookup(raw, "ApiId"))
			ev.Authorizer = scalar(lookup(lookup(raw, "Auth"), "Authorizer"))
		}
		// AWS refuses a mapping whose queue hides a message for less than the function may run.
		if vis := c.visibility[ev.Source]; ev.Type == EventSQS && vis < f.Timeout && c.cfg.VisibilityTimeout == 0 {
			return nil, fmt.Errorf("function %s: event %s: queue visibility timeout %d s is less than the function timeout %d s, which AWS rejects",
				id, name, vis, f.Timeout)
		}
		f.Events = append(f.Events, *ev)
	}
	return f, nil
}

func (c *Cloud) event(name, typ string, p map[string]any) (*Event, error) {
	ev := &Event{Name: name, Type: typ, StartingPosition: "LATEST", MaxRetries: -1, MaxRecordAge: -1}
	var opts struct {
		ScalingConfig              struct{ MaximumConcurrency int }
		MaximumRetryAttempts       *int
		MaximumRecordAgeInSeconds  *int
		BisectBatchOnFunctionError bool
		DestinationConfig          struct{ OnFailure struct{ Destination string } }
	}
	if err := remarshal(p, &opts); err != nil {
		return nil, err
	}
	ev.MaxConcurrency = opts.ScalingConfig.MaximumConcurrency
	if opts.MaximumRetryAttempts != nil {
		ev.MaxRetries = *opts.MaximumRetryAttempts
	}
	if opts.MaximumRecordAgeInSeconds != nil {
		ev.MaxRecordAge = *opts.MaximumRecordAgeInSeconds
	}
	ev.Bisect = opts.BisectBatchOnFunctionError
	ev.OnFailure = opts.DestinationConfig.OnFailure.Destination
	var err error
	if ev.Filter, err = parseFilter(p["FilterCriteria"]); err != nil {
		return nil, err
	}
	if err := c.scaling(ev, p); err != nil {
		return nil, err
	}
	if enabled, ok := p["Enabled"]; ok && fmt.Sprint(enabled) == "false" {
		c.log.Info("event source disabled in the template", "event", name)
		return nil, nil
	}
	if n, ok := p["BatchSize"]; ok {
		if _, err := fmt.Sscan(fmt.Sprint(n), &ev.BatchSize); err != nil {
			return nil, fmt.Errorf("BatchSize: %w", err)
		}
	}
	if s, ok := p["StartingPosition"].(string); ok {
		ev.StartingPosition = s
	}
	if rt, ok := p["FunctionResponseTypes"].([]any); ok {
		for _, t := range rt {
			ev.ReportFailures = ev.ReportFailures || t == "ReportBatchItemFailures"
		}
	}
	switch typ {
	case EventSQS:
		ev.SourceARN, _ = p["Queue"].(string)
		for id, q := range c.refs.queues {
			if q.ARN == ev.SourceARN {
				ev.Source = id
			}
		}
		if ev.Source == "" {
			return nil, fmt.Errorf("queue %q is not a queue of the template", ev.SourceARN)
		}
		if ev.BatchSize <= 0 {
			ev.BatchSize = 10
		}
	case EventDynamoDB:
		ev.SourceARN, _ = p["Stream"].(string)
		for id, t := range c.refs.tables {
			if t.StreamARN != "" && t.StreamARN == ev.SourceARN {
				ev.Source = id
			}
		}
		if ev.Source == "" {
			return nil, fmt.Errorf("stream %q is not a table stream of the template", ev.SourceARN)
		}
		if ev.BatchSize <= 0 {
			ev.BatchSize = 100
		}
	case EventHTTPAPI:
		ev.Path, _ = p["Path"].(string)
		ev.Method, _ = p["Method"].(string)
		if ev.Path == "" {
			ev.Path = "/{proxy+}"
		}
		ev.Method = strings.ToUpper(ev.Method)
		if ev.Method == "" {
			ev.Method = "ANY"
		}
	default:
		c.log.Warn("event type not emulated locally", "event", name, "type", typ)
		return nil, nil
	}
	return ev, nil
}
