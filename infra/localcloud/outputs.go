package localcloud

import "os"

// outputs resolves the template's Outputs with the local resources' values, as CloudFormation
// would report them for a deployed stack; an output the local cloud cannot resolve (a resource
// or an intrinsic it does not emulate) is left out. The operator's tool reads them from
// endpoints.json as it reads a stack's outputs.
func (c *Cloud) outputs() map[string]string {
	raw, err := os.ReadFile(c.cfg.Template)
	if err != nil {
		return nil
	}
	root, err := parseRoot(raw)
	if err != nil {
		return nil
	}
	out := map[string]string{}
	for id, o := range mapping(lookup(root, "Outputs")) {
		v := lookup(o, "Value")
		if v == nil {
			continue
		}
		if s, err := c.refs.resolveString(v); err == nil {
			out[id] = s
		}
	}
	return out
}
