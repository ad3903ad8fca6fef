package localcloud

import (
	"fmt"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// refs answers !Ref and !GetAtt for the local resources.
type refs struct {
	functions map[string]bool
	params    map[string]string
	tables    map[string]Table
	queues    map[string]Queue
	buckets   map[string]Bucket
	kinesis   map[string]KinesisStream
	policies  map[string]string // AWS::IAM::ManagedPolicy logical id → its ARN
	mappings  map[string]any    // the template's Mappings, for Fn::FindInMap
	prefix    string
	region    string
	account   string
	conds     conditions
}

func (r *refs) ref(name string) (string, error) {
	switch name {
	case "AWS::Region":
		return r.region, nil
	case "AWS::AccountId":
		return r.account, nil
	case "AWS::StackName":
		return r.prefix, nil
	case "AWS::Partition":
		return "aws", nil
	case "AWS::URLSuffix":
		return "amazonaws.com", nil
	case "AWS::NoValue":
		return "", nil
	}
	if v, ok := r.params[name]; ok {
		return v, nil
	}
	if t, ok := r.tables[name]; ok {
		return t.Name, nil
	}
	if q, ok := r.queues[name]; ok {
		return q.URL, nil
	}
	if b, ok := r.buckets[name]; ok {
		return b.Name, nil
	}
	if s, ok := r.kinesis[name]; ok {
		return s.Name, nil
	}
	if r.functions[name] {
		return name, nil // the local Lambda API names functions by logical id
	}
	if arn, ok := r.policies[name]; ok {
		return arn, nil
	}
	return "", fmt.Errorf("!Ref %s: no local value (only parameters with defaults, tables, queues, buckets, Kinesis streams, managed policies and pseudo parameters resolve)", name)
}

func (r *refs) getAtt(name, attr string) (string, error) {
	if t, ok := r.tables[name]; ok {
		switch attr {
		case "Arn":
			return t.ARN, nil
		case "StreamArn":
			if t.StreamARN == "" {
				return "", fmt.Errorf("!GetAtt %s.StreamArn: the table has no stream", name)
			}
			return t.StreamARN, nil
		}
	}
	if q, ok := r.queues[name]; ok {
		switch attr {
		case "Arn":
			return q.ARN, nil
		case "QueueName":
			return q.Name, nil
		case "QueueUrl":
			return q.URL, nil
		}
	}
	if b, ok := r.buckets[name]; ok && attr == "Arn" {
		return b.ARN, nil
	}
	if s, ok := r.kinesis[name]; ok && attr == "Arn" {
		return s.ARN, nil
	}
	if r.functions[name] && attr == "Arn" {
		return fmt.Sprintf("arn:aws:lambda:%s:%s:function:%s", r.region, r.account, name), nil
	}
	return "", fmt.Errorf("!GetAtt %s.%s: no local value", name, attr)
}

// resolve turns a YAML node into plain Go values, evaluating Ref, GetAtt, Sub, Join and Select
// in short and long form.
func (r *refs) resolve(n *yaml.Node) (any, error) { return decode(n, r.intrinsic) }

// decode turns a YAML node into plain Go values (map[string]any, []any, string, int, float64,
// bool, nil), and each intrinsic function call in it, short (!Sub s) or long ({Fn::Sub: s})
// form, into what call returns for the function's name without "Fn::" and its argument.
func decode(n *yaml.Node, call func(fn string, arg *yaml.Node) (any, error)) (any, error) {
	if n == nil {
		return nil, nil
	}
	if fn, arg, ok := intrinsicCall(n); ok {
		return call(fn, arg)
	}
	switch n.Kind {
	case yaml.AliasNode:
		return decode(n.Alias, call)
	case yaml.MappingNode:
		out := make(map[string]any, len(n.Content)/2)
		for i := 0; i+1 < len(n.Content); i += 2 {
			v, err := decode(n.Content[i+1], call)
			if err != nil {
				return nil, err
			}
			if v != (noValue{}) {
				out[n.Content[i].Value] = v
			}
		}
		return out, nil
	case yaml.SequenceNode:
		out := make([]any, 0, len(n.Content))
		for _, c := range n.Content {
			v, err := decode(c, call)
			if err != nil {
				return nil, err
			}
			if v != (noValue{}) {
				out = append(out, v)
			}
		}
		return out, nil
	case yaml.DocumentNode:
		if len(n.Content) == 1 {
			return decode(n.Content[0], call)
		}
		return nil, nil
	}
	var v any
	if err := n.Decode(&v); err != nil {
		return nil, fmt.Errorf("line %d: %w", n.Line, err)
	}
	return v, nil
}

// intrinsicCall reports whether n calls an intrinsic function, in short form (a local tag:
// !Ref x) or long form (a one-key mapping: {Ref: x}, {Fn::GetAtt: [a, b]}), and returns the
// function's name without "Fn::" and its argument, without the tag.
func intrinsicCall(n *yaml.Node) (fn string, arg *yaml.Node, ok bool) {
	if strings.HasPrefix(n.Tag, "!") && !strings.HasPrefix(n.Tag, "!!") {
		plain := *n
		plain.Tag = ""
		return n.Tag[1:], &plain, true
	}
	if n.Kind == yaml.MappingNode && len(n.Content) == 2 {
		if key := n.Content[0].Value; key == "Ref" || strings.HasPrefix(key, "Fn::") {
			return strings.TrimPrefix(key, "Fn::"), n.Content[1], true
		}
	}
	return "", nil, false
}

// resolveString resolves a node that must give a string (numbers and booleans are formatted).
func (r *refs) resolveString(n *yaml.Node) (string, error) {
	v, err := r.resolve(n)
	if err != nil {
		return "", err
	}
	return stringify(v)
}

func stringify(v any) (string, error) {
	switch x := v.(type) {
	case string:
		return x, nil
	case nil:
		return "", nil
	case int, int64, float64, bool:
		return fmt.Sprint(x), nil
	}
	return "", fmt.Errorf("want a string, got %T", v)
}

func (r *refs) intrinsic(fn string, arg *yaml.Node) (any, error) {
	if fn == "If" {
		return r.ifCall(arg)
	}
	args, err := r.resolve(arg)
	if err != nil {
		return nil, err
	}
	switch fn {
	case "Ref":
		name, _ := args.(string)
		if name == "AWS::NoValue" {
			return noValue{}, nil
		}
		return r.ref(name)
	case "GetAtt":
		return r.getAttArgs(args)
	case "Sub":
		return r.sub(args)
	case "Join":
		return join(args)
	case "Select":
		return selectItem(args)
	case "FindInMap":
		return r.findInMap(args)
	}
	return nil, fmt.Errorf("line %d: intrinsic function %s is not supported locally", arg.Line, fn)
}

func (r *refs) getAttArgs(args any) (string, error) {
	switch x := args.(type) {
	case string:
		name, attr, ok := strings.Cut(x, ".")
		if !ok {
			return "", fmt.Errorf("!GetAtt %q: want Resource.Attribute", x)
		}
		return r.getAtt(name, attr)
	case []any:
		if len(x) == 2 {
			name, _ := x[0].(string)
			attr, _ := x[1].(string)
			return r.getAtt(name, attr)
		}
	}
	return "", fmt.Errorf("!GetAtt %v: want Resource.Attribute or [Resource, Attribute]", args)
}

func (r *refs) sub(args any) (string, error) {
	text, vars := "", map[string]any{}
	switch x := args.(type) {
	case string:
		text = x
	case []any:
		if len(x) != 2 {
			return "", fmt.Errorf("!Sub: want a string or [string, variables]")
		}
		text, _ = x[0].(string)
		vars, _ = x[1].(map[string]any)
	default:
		return "", fmt.Errorf("!Sub: want a string or [string, variables]")
	}
	var b strings.Builder
	for {
		start := strings.Index(text, "${")
		if start < 0 {
			b.WriteString(text)
			return b.String(), nil
		}
		end := strings.Index(text[start:], "}")
		if end < 0 {
			return "", fmt.Errorf("!Sub: unclosed ${ in %q", text)
		}
		b.WriteString(text[:start])
		name := text[start+2 : start+end]
		text = text[start+end+1:]
		if strings.HasPrefix(name, "!") { // ${!Literal} writes ${Literal}
			b.WriteString("${" + name[1:] + "}")
			continue
		}
		val, err := r.subVar(name, vars)
		if err != nil {
			return "", err
		}
		b.WriteString(val)
	}
}

func (r *refs) subVar(name string, vars map[string]any) (string, error) {
	if v, ok := vars[name]; ok {
		return stringify(v)
	}
	if res, attr, ok := strings.Cut(name, "."); ok && !strings.HasPrefix(name, "AWS::") {
		return r.getAtt(res, attr)
	}
	return r.ref(name)
}

// findInMap answers !FindInMap [map, top-level key, second-level key] from the template's
// Mappings.
func (r *refs) findInMap(args any) (any, error) {
	x, ok := args.([]any)
	if !ok || len(x) != 3 {
		return nil, fmt.Errorf("!FindInMap: want [map, key, key]")
	}
	v := any(r.mappings)
	for _, k := range x {
		m, ok := v.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("!FindInMap %v: no such entry in Mappings", x)
		}
		if v, ok = m[fmt.Sprint(k)]; !ok {
			return nil, fmt.Errorf("!FindInMap %v: no such entry in Mappings", x)
		}
	}
	return v, nil
}

func join(args any) (string, error) {
	x, ok := args.([]any)
	if !ok || len(x) != 2 {
		return "", fmt.Errorf("!Join: want [delimiter, [values]]")
	}
	delim, _ := x[0].(string)
	items, _ := x[1].([]any)
	parts := make([]string, 0, len(items))
	for _, it := range items {
		s, err := stringify(it)
		if err != nil {
			return "", fmt.Errorf("!Join: %w", err)
		}
		parts = append(parts, s)
	}
	return strings.Join(parts, delim), nil
}

func selectItem(args any) (any, error) {
	x, ok := args.([]any)
	if !ok || len(x) != 2 {
		return nil, fmt.Errorf("!Select: want [index, [values]]")
	}
	idx, err := strconv.Atoi(fmt.Sprint(x[0]))
	items, _ := x[1].([]any)
	if err != nil || idx < 0 || idx >= len(items) {
		return nil, fmt.Errorf("!Select: index %v out of range", x[0])
	}
	return items[idx], nil
}

// referencedResource returns the logical id a !Ref or !GetAtt node (short or long form) names,
// or "".
func referencedResource(n *yaml.Node) string {
	if n == nil {
		return ""
	}
	fn, arg, ok := intrinsicCall(n)
	if !ok {
		return ""
	}
	switch fn {
	case "Ref":
		return arg.Value
	case "GetAtt":
		if arg.Kind == yaml.SequenceNode && len(arg.Content) > 0 {
			return arg.Content[0].Value
		}
		name, _, _ := strings.Cut(arg.Value, ".")
		return name
	}
	return ""
}
