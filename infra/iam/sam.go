package iam

import (
	"errors"
	"fmt"
	"reflect"
	"sort"
	"strings"
)

// Role is an execution role as the SAM transform writes it into the CloudFormation template:
// its ManagedPolicyArns and its inline Policies ({"PolicyName": ..., "PolicyDocument": ...}),
// intrinsic functions left as they are (a GetAtt of a queue is still {"Fn::GetAtt": [...]}).
type Role struct {
	LogicalID         string // <function>Role
	ManagedPolicyArns []any
	Policies          []any // nil when the role has none, as the translation leaves the key out
}

// The managed policies the transform attaches by itself.
const (
	basicExecution = "arn:aws:iam::aws:policy/service-role/AWSLambdaBasicExecutionRole"
	xrayWrite      = "arn:aws:iam::aws:policy/AWSXrayWriteOnlyAccess"
	vpcAccess      = "arn:aws:iam::aws:policy/service-role/AWSLambdaVPCAccessExecutionRole"
)

// pullSources are the event source types that poll, each with the managed policy the transform
// attaches for its polling.
var pullSources = map[string]string{
	"SQS":      "arn:aws:iam::aws:policy/service-role/AWSLambdaSQSQueueExecutionRole",
	"DynamoDB": "arn:aws:iam::aws:policy/service-role/AWSLambdaDynamoDBExecutionRole",
	"Kinesis":  "arn:aws:iam::aws:policy/service-role/AWSLambdaKinesisExecutionRole",
}

// pushSources are the event source types that add nothing to the role (their permission is
// the function's resource policy).
var pushSources = map[string]bool{"HttpApi": true, "Api": true, "Schedule": true, "ScheduleV2": true,
	"SNS": true, "S3": true, "CloudWatchEvent": true, "EventBridgeRule": true, "CloudWatchLogs": true}

// Roles derives, for every AWS::Serverless::Function of a SAM template (a JSON-shaped value,
// intrinsic functions in their long forms, as localcloud.LoadDocument reads one), the
// execution role the transform creates, keyed by the function's logical id: the basic
// execution policy, X-Ray's when Tracing is on (not Disabled), the VPC policy with VpcConfig,
// the function's Policies in order (managed policy ARNs or names, intrinsic functions taken as
// managed policy ARNs, statements as <function>RolePolicy<i>, policy templates expanded), then
// each polling event source's managed policy and the SQS, SNS or S3 statement for its
// DestinationConfig.OnFailure, events in the transform's order. What the transform would do
// and this does not know (a Role of the function's own, a DeadLetterQueue, an
// EventInvokeConfig, another event source type) is an error, never a guess.
func Roles(tpl map[string]any) (map[string]Role, error) {
	resources, _ := tpl["Resources"].(map[string]any)
	globals, _ := path(tpl, "Globals", "Function").(map[string]any)
	params, _ := tpl["Parameters"].(map[string]any)
	out := map[string]Role{}
	var errs []error
	for _, id := range sortedKeys(resources) {
		res, _ := resources[id].(map[string]any)
		if res["Type"] != "AWS::Serverless::Function" {
			continue
		}
		props, _ := res["Properties"].(map[string]any)
		r, err := functionRole(id, props, globals, params)
		if err != nil {
			errs = append(errs, fmt.Errorf("function %s: %w", id, err))
			continue
		}
		out[id] = r
	}
	return out, errors.Join(errs...)
}

func functionRole(id string, props, globals, params map[string]any) (Role, error) {
	prop := func(k string) any {
		if v, ok := props[k]; ok {
			return v
		}
		return globals[k]
	}
	for _, k := range []string{"Role", "DeadLetterQueue", "EventInvokeConfig", "DurableConfig", "PermissionsBoundary"} {
		if prop(k) != nil {
			return Role{}, fmt.Errorf("%s: not derived here (the local cloud derives roles the transform creates from Policies and Events)", k)
		}
	}
	r := Role{LogicalID: id + "Role", ManagedPolicyArns: []any{basicExecution}}
	if t := prop("Tracing"); t != nil && resolveParameter(t, params) != "Disabled" {
		r.ManagedPolicyArns = append(r.ManagedPolicyArns, xrayWrite)
	}
	if prop("VpcConfig") != nil {
		r.ManagedPolicyArns = append(r.ManagedPolicyArns, vpcAccess)
	}
	for i, p := range list(props["Policies"]) {
		if err := r.addPolicy(i, p); err != nil {
			return Role{}, fmt.Errorf("Policies[%d]: %w", i, err)
		}
	}
	events, _ := props["Events"].(map[string]any)
	for _, name := range eventOrder(events) {
		ev, _ := events[name].(map[string]any)
		if err := r.addEvent(id+name, ev); err != nil {
			return Role{}, fmt.Errorf("event %s: %w", name, err)
		}
	}
	return r, nil
}

// addPolicy adds entry i of the function's Policies, as the transform classifies it.
func (r *Role) addPolicy(i int, p any) error {
	switch x := p.(type) {
	case string:
		arn := x
		if !strings.HasPrefix(x, "arn:") {
			if arn = managedARN(x); arn == "" {
				return fmt.Errorf("managed policy %q: give its ARN (only the pinned ones are known by name: %v)", x, ManagedPolicyARNs())
			}
		}
		r.addManaged(arn)
		return nil
	case map[string]any:
		if _, ok := x["Fn::If"]; ok {
			return errors.New("Fn::If among Policies is not derived here")
		}
		if isIntrinsic(x) { // a Ref or GetAtt of a managed policy: its ARN
			r.addManaged(x)
			return nil
		}
		if _, ok := x["Statement"]; ok {
			r.addInline(fmt.Sprintf("%sPolicy%d", r.LogicalID, i), x)
			return nil
		}
		if len(x) == 1 {
			for name, params := range x {
				doc, err := expandTemplate(name, params)
				if err != nil {
					return err
				}
				r.addInline(fmt.Sprintf("%sPolicy%d", r.LogicalID, i), doc)
			}
			return nil
		}
	}
	return fmt.Errorf("%v is neither a managed policy, a policy document nor a policy template", p)
}

func (r *Role) addManaged(arn any) {
	for _, have := range r.ManagedPolicyArns {
		if reflect.DeepEqual(have, arn) {
			return
		}
	}
	r.ManagedPolicyArns = append(r.ManagedPolicyArns, arn)
}

func (r *Role) addInline(name string, doc any) {
	r.Policies = append(r.Policies, map[string]any{"PolicyName": name, "PolicyDocument": deepCopy(doc)})
}

// addEvent adds what a function's event source adds to its role; logicalID is the event's
// (function id and event name).
func (r *Role) addEvent(logicalID string, ev map[string]any) error {
	typ, _ := ev["Type"].(string)
	if pushSources[typ] {
		return nil
	}
	arn, ok := pullSources[typ]
	if !ok {
		return fmt.Errorf("event source type %q is not derived here", typ)
	}
	r.addManaged(arn)
	onFailure, _ := path(ev, "Properties", "DestinationConfig", "OnFailure").(map[string]any)
	dest := onFailure["Destination"]
	var sts []any
	var suffix string
	switch onFailure["Type"] {
	case nil:
		return nil // the transform adds a statement only when told the destination's type
	case "SQS":
		suffix, sts = "SQSPolicy", []any{map[string]any{"Action": "sqs:SendMessage", "Effect": "Allow", "Resource": dest}}
	case "SNS":
		suffix, sts = "SNSPolicy", []any{map[string]any{"Action": "sns:publish", "Effect": "Allow", "Resource": dest}}
	case "S3":
		suffix, sts = "S3Policy", []any{
			map[string]any{"Action": "s3:PutObject", "Effect": "Allow", "Resource": map[string]any{"Fn::Join": []any{"/", []any{dest, "*"}}}},
			map[string]any{"Action": "s3:ListBucket", "Effect": "Allow", "Resource": dest}}
	default:
		return fmt.Errorf("DestinationConfig.OnFailure.Type %v, want SQS, SNS or S3", onFailure["Type"])
	}
	doc := map[string]any{"Statement": sts}
	for _, p := range r.Policies {
		if reflect.DeepEqual(p.(map[string]any)["PolicyDocument"], doc) {
			return nil // the transform adds no document the role already has
		}
	}
	r.addInline(logicalID+suffix, doc)
	return nil
}

// eventOrder is the order in which the transform processes a function's events: by their
// Path when they have one, else by name.
func eventOrder(events map[string]any) []string {
	names := sortedKeys(events)
	key := func(n string) string {
		if p, ok := path(events[n], "Properties", "Path").(string); ok {
			return p
		}
		return n
	}
	sort.SliceStable(names, func(i, j int) bool { return key(names[i]) < key(names[j]) })
	return names
}

// resolveParameter resolves a {"Ref": parameter} to the parameter's default, else returns v
// as a string.
func resolveParameter(v any, params map[string]any) string {
	if m, ok := v.(map[string]any); ok {
		if name, ok := m["Ref"].(string); ok {
			return fmt.Sprint(path(params, name, "Default"))
		}
	}
	return fmt.Sprint(v)
}

// isIntrinsic reports whether m is an intrinsic function call: one key, Ref or Fn::*.
func isIntrinsic(m map[string]any) bool {
	if len(m) != 1 {
		return false
	}
	for k := range m {
		return k == "Ref" || strings.HasPrefix(k, "Fn::")
	}
	return false
}

func path(v any, keys ...string) any {
	for _, k := range keys {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[k]
	}
	return v
}
