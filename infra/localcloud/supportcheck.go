package localcloud

import (
	"errors"
	"fmt"
	"slices"

	"go.yaml.in/yaml/v3"
)

// checkSupport refuses what of the template at path (its top-level mapping root) the local
// cloud does not run, each problem naming the resource and the property, as the tables
// SupportedResources and SupportedEvents say: a template starts only when everything in it
// is emulated or accepted.
func checkSupport(path string, root *yaml.Node) error {
	var errs []error
	refuse := func(format string, args ...any) {
		errs = append(errs, fmt.Errorf("%s: %s is not supported by the local cloud", path, fmt.Sprintf(format, args...)))
	}
	for i := 0; i+1 < len(root.Content); i += 2 {
		if name := root.Content[i].Value; !slices.Contains(templateSections, name) {
			refuse("section %s", name)
		}
	}
	globals := lookup(root, "Globals")
	for _, name := range keys(globals) {
		g := lookup(globals, name)
		if name != "Function" {
			refuse("Globals.%s", name)
			continue
		}
		fn := supported(SupportedResources, typeFunction)
		for _, p := range keys(g) {
			if _, ok := fn.Properties[p]; !ok {
				refuse("Globals.Function: property %s", p)
			}
		}
	}
	resources := lookup(root, "Resources")
	if resources == nil {
		return errors.Join(errs...)
	}
	for i := 0; i+1 < len(resources.Content); i += 2 {
		id, res := resources.Content[i].Value, resources.Content[i+1]
		for _, problem := range resourceProblems(res) {
			refuse("resource %s%s", id, problem)
		}
	}
	if len(errs) > 0 {
		errs = append(errs, errors.New("`localcloud support` lists what the local cloud runs of SAM, each resource type with its properties"))
	}
	return errors.Join(errs...)
}

// resourceProblems returns what the local cloud does not support of one resource, each as the
// rest of a sentence after its logical id (" (TYPE): property P").
func resourceProblems(res *yaml.Node) []string {
	typ := scalar(lookup(res, "Type"))
	s := supported(SupportedResources, typ)
	if s == nil {
		return []string{fmt.Sprintf(": type %s", typ)}
	}
	if s.Properties == nil { // not created: nothing of it matters locally
		return nil
	}
	at := fmt.Sprintf(" (%s)", typ)
	var out []string
	for _, a := range keys(res) {
		if !slices.Contains(resourceAttributes, a) {
			out = append(out, fmt.Sprintf("%s: attribute %s", at, a))
		}
	}
	props := lookup(res, "Properties")
	for _, p := range keys(props) {
		if _, ok := s.Properties[p]; !ok {
			out = append(out, fmt.Sprintf("%s: property %s", at, p))
		}
	}
	if typ != typeFunction {
		return out
	}
	if m := scalar(lookup(lookup(res, "Metadata"), "BuildMethod")); !slices.Contains(BuildMethods, m) {
		out = append(out, fmt.Sprintf("%s: Metadata.BuildMethod %s", at, m))
	}
	events := lookup(props, "Events")
	for _, name := range keys(events) {
		for _, problem := range eventProblems(lookup(events, name)) {
			out = append(out, fmt.Sprintf("%s: event %s%s", at, name, problem))
		}
	}
	return out
}

// eventProblems returns what the local cloud does not support of one event source of a function.
func eventProblems(ev *yaml.Node) []string {
	typ := scalar(lookup(ev, "Type"))
	s := supported(SupportedEvents, typ)
	if s == nil {
		return []string{fmt.Sprintf(": type %s", typ)}
	}
	var out []string
	for _, k := range keys(ev) {
		if k != "Type" && k != "Properties" {
			out = append(out, fmt.Sprintf(" (%s): %s", typ, k))
		}
	}
	for _, p := range keys(lookup(ev, "Properties")) {
		if _, ok := s.Properties[p]; !ok {
			out = append(out, fmt.Sprintf(" (%s): property %s", typ, p))
		}
	}
	return out
}

// keys returns the keys of a mapping node in document order (none for another kind of node).
func keys(n *yaml.Node) []string {
	if n == nil || n.Kind != yaml.MappingNode {
		return nil
	}
	out := make([]string, 0, len(n.Content)/2)
	for i := 0; i+1 < len(n.Content); i += 2 {
		out = append(out, n.Content[i].Value)
	}
	return out
}
