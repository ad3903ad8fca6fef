package consumerunit

import (
	"bytes"
	"errors"
	"fmt"
)

// Project is a standalone application of consumers: what `onceflow init` writes.
type Project struct {
	Name      string // kebab-case project name (Description, table names by stack)
	Consumers []Consumer
}

// Template is the whole SAM template of a project: the parameters, conditions and shared
// resources (idempotency table, application table, payload bucket, the operator's policy, the
// alarm topic) every unit refers to, then each consumer's unit and outputs. It is the shared
// part with each consumer added to it by Add, in order.
func Template(p Project) ([]byte, error) {
	if !validName.MatchString(p.Name) {
		return nil, fmt.Errorf("project name %q: want lower-case words joined by '-' (order-service)", p.Name)
	}
	if len(p.Consumers) == 0 {
		return nil, errors.New("a project needs a consumer")
	}
	var b bytes.Buffer
	if err := tmpl.ExecuteTemplate(&b, "project.yaml.tmpl", p); err != nil {
		return nil, fmt.Errorf("project %s: %w", p.Name, err)
	}
	tpl := b.Bytes()
	for _, c := range p.Consumers {
		var err error
		if tpl, err = Add(tpl, c); err != nil {
			return nil, err
		}
	}
	return tpl, nil
}

// Add splices one more consumer's unit (its resources and outputs) into a template Template
// (or a previous Add) wrote; it refuses a consumer whose name is taken.
func Add(template []byte, c Consumer) ([]byte, error) {
	out, err := Splice(template, c.Unit())
	if err != nil {
		return nil, fmt.Errorf("add consumer %s: %w", c.Name, err)
	}
	return out, nil
}
