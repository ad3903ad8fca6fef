package localcloud

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"

	"go.yaml.in/yaml/v3"
)

// Resource types the local cloud understands.
const (
	typeTable    = "AWS::DynamoDB::Table"
	typeQueue    = "AWS::SQS::Queue"
	typeKinesis  = "AWS::Kinesis::Stream"
	typeFunction = "AWS::Serverless::Function"
	typeHTTPAPI  = "AWS::Serverless::HttpApi"
	typeBucket   = "AWS::S3::Bucket"

	typeManagedPolicy = "AWS::IAM::ManagedPolicy"
)

// Template is the part of a SAM template the local cloud runs. Property nodes are kept as YAML
// nodes, tags included, and resolved only once the resources they refer to exist.
type Template struct {
	Dir        string                // directory of the template file; CodeUri is relative to it
	Parameters map[string]string     // parameter defaults
	Declared   []string              // every parameter the template declares, with or without a default
	Tables     []string              // logical ids of AWS::DynamoDB::Table, in template order
	Queues     []string              // logical ids of AWS::SQS::Queue, in template order
	Buckets    []string              // logical ids of AWS::S3::Bucket, in template order
	Kinesis    []string              // logical ids of AWS::Kinesis::Stream, in template order
	Functions  []string              // logical ids of AWS::Serverless::Function, in template order
	Properties map[string]*yaml.Node // logical id → Properties mapping (Globals applied for functions; HttpApis too)
	Types      map[string]string     // logical id → resource type, for every resource
	// BuildMethod is a function's Metadata.BuildMethod ("makefile", ...), by logical id.
	BuildMethod map[string]string
	// Constraints are the declared parameters' types and constraints, by name.
	Constraints map[string]Parameter
	// Conditions are the template's Conditions, by name, unevaluated.
	Conditions map[string]*yaml.Node
	// Mappings is the template's Mappings section, nil without one.
	Mappings *yaml.Node
	// ManagedPolicies are the logical ids of AWS::IAM::ManagedPolicy, in template order.
	ManagedPolicies []string
}

// Declares reports whether the template declares parameter name.
func (t *Template) Declares(name string) bool { return slices.Contains(t.Declared, name) }

// LoadTemplate reads a SAM template file the local cloud can run: one with a resource type, an
// event type or a property it neither emulates nor accepts (SupportedResources,
// SupportedEvents) is refused, every such property named with its resource.
func LoadTemplate(path string) (*Template, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, err
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read template: %w", err)
	}
	root, err := parseRoot(raw)
	if err != nil {
		return nil, fmt.Errorf("template %s: %w", path, err)
	}
	if err := checkSupport(path, root); err != nil { // each line names the template itself
		return nil, err
	}
	t, err := ParseTemplate(raw)
	if err != nil {
		return nil, fmt.Errorf("template %s: %w", path, err)
	}
	t.Dir = filepath.Dir(abs)
	return t, nil
}

// readTemplate reads the template file at path and parses its text with parse.
func readTemplate[T any](path string, parse func([]byte) (T, error)) (T, error) {
	var zero T
	raw, err := os.ReadFile(path)
	if err != nil {
		return zero, fmt.Errorf("read template: %w", err)
	}
	v, err := parse(raw)
	if err != nil {
		return zero, fmt.Errorf("template %s: %w", path, err)
	}
	return v, nil
}

// parseRoot parses the YAML text of a template and returns its top-level mapping.
func parseRoot(raw []byte) (*yaml.Node, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(raw, &doc); err != nil {
		return nil, fmt.Errorf("parse: %w", err)
	}
	if len(doc.Content) != 1 || doc.Content[0].Kind != yaml.MappingNode {
		return nil, fmt.Errorf("parse: the document is not a mapping")
	}
	return doc.Content[0], nil
}

// ParseTemplate parses the YAML text of a SAM template.
func ParseTemplate(raw []byte) (*Template, error) {
	root, err := parseRoot(raw)
	if err != nil {
		return nil, err
	}
	t := &Template{
		Parameters:  map[string]string{},
		Constraints: map[string]Parameter{},
		Properties:  map[string]*yaml.Node{},
		Types:       map[string]string{},
		BuildMethod: map[string]string{},
	}
	for name, p := range mapping(lookup(root, "Parameters")) {
		t.Declared = append(t.Declared, name)
		t.Constraints[name] = parseParameter(p)
		if d := lookup(p, "Default"); d != nil {
			t.Parameters[name] = d.Value
		}
	}
	t.Conditions = mapping(lookup(root, "Conditions"))
	t.Mappings = lookup(root, "Mappings")
	globals := lookup(lookup(root, "Globals"), "Function")
	resources := lookup(root, "Resources")
	if resources == nil {
		return nil, fmt.Errorf("parse: no Resources")
	}
	for i := 0; i+1 < len(resources.Content); i += 2 {
		id, res := resources.Content[i].Value, resources.Content[i+1]
		typ := scalar(lookup(res, "Type"))
		t.Types[id] = typ
		props := lookup(res, "Properties")
		if props == nil {
			props = &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
		}
		switch typ {
		case typeTable:
			t.Tables = append(t.Tables, id)
		case typeQueue:
			t.Queues = append(t.Queues, id)
		case typeBucket:
			t.Buckets = append(t.Buckets, id)
		case typeKinesis:
			t.Kinesis = append(t.Kinesis, id)
		case typeFunction:
			t.Functions = append(t.Functions, id)
			props = mergeGlobals(globals, props)
			t.BuildMethod[id] = scalar(lookup(lookup(res, "Metadata"), "BuildMethod"))
		case typeHTTPAPI: // its Auth is read by the gateway; nothing else is emulated
		case typeManagedPolicy: // its document is a principal's for the gatekeeper
			t.ManagedPolicies = append(t.ManagedPolicies, id)
		default:
			continue
		}
		t.Properties[id] = props
	}
	return t, nil
}

// mergeGlobals applies Globals.Function under a function's own properties: the function's
// values win, and Environment.Variables maps are merged key by key, as SAM does.
func mergeGlobals(globals, props *yaml.Node) *yaml.Node {
	if globals == nil {
		return props
	}
	out := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
	for i := 0; i+1 < len(globals.Content); i += 2 {
		key := globals.Content[i].Value
		if lookup(props, key) == nil {
			out.Content = append(out.Content, globals.Content[i], globals.Content[i+1])
		}
	}
	for i := 0; i+1 < len(props.Content); i += 2 {
		key, val := props.Content[i], props.Content[i+1]
		if key.Value == "Environment" {
			val = mergeEnvironment(lookup(globals, "Environment"), val)
		}
		out.Content = append(out.Content, key, val)
	}
	return out
}

func mergeEnvironment(global, own *yaml.Node) *yaml.Node {
	gv, ov := lookup(global, "Variables"), lookup(own, "Variables")
	if gv == nil {
		return own
	}
	vars := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
	for i := 0; i+1 < len(gv.Content); i += 2 {
		if lookup(ov, gv.Content[i].Value) == nil {
			vars.Content = append(vars.Content, gv.Content[i], gv.Content[i+1])
		}
	}
	if ov != nil {
		vars.Content = append(vars.Content, ov.Content...)
	}
	return &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map", Content: []*yaml.Node{
		{Kind: yaml.ScalarNode, Tag: "!!str", Value: "Variables"}, vars,
	}}
}

// lookup returns the value of key in a mapping node, or nil.
func lookup(n *yaml.Node, key string) *yaml.Node {
	if n == nil || n.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return n.Content[i+1]
		}
	}
	return nil
}

// mapping returns the entries of a mapping node by key.
func mapping(n *yaml.Node) map[string]*yaml.Node {
	out := map[string]*yaml.Node{}
	if n == nil || n.Kind != yaml.MappingNode {
		return out
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		out[n.Content[i].Value] = n.Content[i+1]
	}
	return out
}

func scalar(n *yaml.Node) string {
	if n == nil || n.Kind != yaml.ScalarNode {
		return ""
	}
	return n.Value
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// subset returns a mapping node with only the given keys of n, so that properties the local
// cloud does not use (policies, tags, KMS keys) are never resolved.
func subset(n *yaml.Node, keys ...string) *yaml.Node {
	out := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
	for _, k := range keys {
		if v := lookup(n, k); v != nil {
			out.Content = append(out.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: k}, v)
		}
	}
	return out
}

// functionSubset keeps the function properties and event properties the local cloud runs.
func functionSubset(n *yaml.Node) *yaml.Node {
	out := subset(n, "CodeUri", "Timeout", "MemorySize", "Environment", "LoggingConfig")
	evs := lookup(n, "Events")
	if evs == nil || evs.Kind != yaml.MappingNode {
		return out
	}
	kept := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
	for i := 0; i+1 < len(evs.Content); i += 2 {
		ev := subset(evs.Content[i+1], "Type")
		ev.Content = append(ev.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: "Properties"},
			subset(lookup(evs.Content[i+1], "Properties"), "Queue", "Stream", "BatchSize", "StartingPosition", "MaximumBatchingWindowInSeconds", "ProvisionedPollerConfig",
				"FunctionResponseTypes", "Enabled", "Path", "Method", "FilterCriteria", "ScalingConfig",
				"MaximumRetryAttempts", "DestinationConfig", "MaximumRecordAgeInSeconds", "BisectBatchOnFunctionError"))
		kept.Content = append(kept.Content, evs.Content[i], ev)
	}
	out.Content = append(out.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: "Events"}, kept)
	return out
}

// mappings decodes the template's Mappings for Fn::FindInMap.
func mappings(t *Template) (map[string]any, error) {
	if t.Mappings == nil {
		return nil, nil
	}
	v, err := decode(t.Mappings, longForm)
	if err != nil {
		return nil, fmt.Errorf("mappings: %w", err)
	}
	m, _ := v.(map[string]any)
	return m, nil
}
