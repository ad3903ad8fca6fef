package localcloud

import (
	"strings"

	"go.yaml.in/yaml/v3"
)

// LoadDocument reads a template file as plain Go values (map[string]any, []any, string, int,
// float64, bool, nil), with each intrinsic function in the long form CloudFormation reads:
// !Ref X is {"Ref": "X"}, !GetAtt X.Arn is {"Fn::GetAtt": ["X", "Arn"]}, !Sub s is
// {"Fn::Sub": s}, and so on. Nothing is resolved: it is the template as declared, for checks
// on what it says rather than for running it (LoadTemplate).
func LoadDocument(path string) (map[string]any, error) {
	return readTemplate(path, parseDocument)
}

func parseDocument(raw []byte) (map[string]any, error) {
	root, err := parseRoot(raw)
	if err != nil {
		return nil, err
	}
	v, err := decode(root, longForm)
	if err != nil {
		return nil, err
	}
	return v.(map[string]any), nil
}

// longForm writes the call of intrinsic function fn with argument arg in long form.
func longForm(fn string, arg *yaml.Node) (any, error) {
	v, err := decode(arg, longForm)
	if err != nil {
		return nil, err
	}
	switch fn {
	case "Ref", "Condition":
		return map[string]any{fn: v}, nil
	case "GetAtt":
		if s, ok := v.(string); ok {
			name, attr, _ := strings.Cut(s, ".")
			v = []any{name, attr}
		}
	}
	return map[string]any{"Fn::" + fn: v}, nil
}
