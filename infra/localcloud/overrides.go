package localcloud

import (
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"
)

// Parameter is a template parameter's type and the constraints CloudFormation checks a value
// against.
type Parameter struct {
	Type                  string
	AllowedValues         []string
	AllowedPattern        string
	MinValue, MaxValue    *float64
	MinLength, MaxLength  *int
	ConstraintDescription string
}

func parseParameter(n *yaml.Node) Parameter {
	p := Parameter{Type: scalar(lookup(n, "Type")), AllowedPattern: scalar(lookup(n, "AllowedPattern")),
		ConstraintDescription: scalar(lookup(n, "ConstraintDescription"))}
	if v := lookup(n, "AllowedValues"); v != nil {
		for _, c := range v.Content {
			p.AllowedValues = append(p.AllowedValues, c.Value)
		}
	}
	num := func(key string) *float64 {
		f, err := strconv.ParseFloat(scalar(lookup(n, key)), 64)
		if err != nil {
			return nil
		}
		return &f
	}
	length := func(key string) *int {
		i, err := strconv.Atoi(scalar(lookup(n, key)))
		if err != nil {
			return nil
		}
		return &i
	}
	p.MinValue, p.MaxValue = num("MinValue"), num("MaxValue")
	p.MinLength, p.MaxLength = length("MinLength"), length("MaxLength")
	return p
}

// Check reports why CloudFormation would refuse value for this parameter, or nil.
func (p Parameter) Check(value string) error {
	var problems []string
	if len(p.AllowedValues) > 0 && !slices.Contains(p.AllowedValues, value) {
		problems = append(problems, "allowed values: "+strings.Join(p.AllowedValues, ", "))
	}
	if p.AllowedPattern != "" {
		re, err := regexp.Compile(`^(?:` + p.AllowedPattern + `)$`)
		if err == nil && !re.MatchString(value) {
			problems = append(problems, "does not match the pattern "+p.AllowedPattern)
		}
	}
	if n := utf8.RuneCountInString(value); p.MinLength != nil && n < *p.MinLength {
		problems = append(problems, fmt.Sprintf("at least %d characters", *p.MinLength))
	} else if p.MaxLength != nil && n > *p.MaxLength {
		problems = append(problems, fmt.Sprintf("at most %d characters", *p.MaxLength))
	}
	if p.Type == "Number" {
		problems = append(problems, p.checkNumber(value)...)
	}
	if len(problems) == 0 {
		return nil
	}
	if p.ConstraintDescription != "" {
		problems = append(problems, p.ConstraintDescription)
	}
	return errors.New(strings.Join(problems, "; "))
}

func (p Parameter) checkNumber(value string) []string {
	f, err := strconv.ParseFloat(value, 64)
	switch {
	case err != nil:
		return []string{"not a number"}
	case p.MinValue != nil && f < *p.MinValue:
		return []string{"at least " + strconv.FormatFloat(*p.MinValue, 'f', -1, 64)}
	case p.MaxValue != nil && f > *p.MaxValue:
		return []string{"at most " + strconv.FormatFloat(*p.MaxValue, 'f', -1, 64)}
	}
	return nil
}

// CheckOverrides reports, all at once, every environment count that names no function of the
// template and every parameter override that names no parameter or that the parameter's
// constraints refuse, as `sam deploy` would: before anything starts, each with what is valid.
func (t *Template) CheckOverrides(envs map[string]int, params map[string]string) error {
	var errs []error
	for _, id := range sortedKeys(envs) {
		if !slices.Contains(t.Functions, id) {
			errs = append(errs, fmt.Errorf("environments: no function %q; functions: %s", id, strings.Join(sorted(t.Functions), ", ")))
		}
	}
	for _, name := range sortedKeys(params) {
		p, ok := t.Constraints[name]
		if !ok {
			errs = append(errs, fmt.Errorf("parameter override: no parameter %q; parameters: %s", name, strings.Join(sorted(t.Declared), ", ")))
			continue
		}
		if err := p.Check(params[name]); err != nil {
			errs = append(errs, fmt.Errorf("parameter override %s=%q refused: %w", name, params[name], err))
		}
	}
	return errors.Join(errs...)
}

// ResolveFunction returns the logical id among ids that name designates: the id itself, or a
// name equal to one ignoring case, dashes, underscores and a "Function" suffix ("ledger" for
// LedgerFunction, "sqs-consumer" for SQSConsumer). Otherwise its error lists the valid ids.
func ResolveFunction(ids []string, name string) (string, error) {
	norm := func(s string) string {
		s = strings.ToLower(strings.NewReplacer("-", "", "_", "").Replace(s))
		return strings.TrimSuffix(s, "function")
	}
	if slices.Contains(ids, name) {
		return name, nil
	}
	for _, id := range ids {
		if norm(id) == norm(name) {
			return id, nil
		}
	}
	return "", fmt.Errorf("no function %q; functions: %s", name, strings.Join(sorted(ids), ", "))
}

func sorted(s []string) []string {
	s = slices.Clone(s)
	slices.Sort(s)
	return s
}
