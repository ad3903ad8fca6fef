package project

import (
	"fmt"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/onceflow/onceflow/infra/consumerunit"
)

// consumer is what a consumer's files are written from.
type consumer struct {
	Name   string // orders: CONSUMER_NAME, functions/orders, its keys' prefix
	Pkg    string // orders: internal/orders (the name without '-')
	Event  string // the event type it applies: order.placed
	Module string // the project's module path
	Prefix string // ORDERS: the partition keys it may write in the app table, ORDERS#...
}

var (
	validName = regexp.MustCompile(`^[a-z][a-z0-9]*(-[a-z0-9]+)*$`)
	validType = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]*$`)
)

func newConsumer(module, queue, event string) (consumer, error) {
	if !validName.MatchString(queue) {
		return consumer{}, fmt.Errorf("--queue %q: want lower-case words joined by '-' (orders, order-lines)", queue)
	}
	if !validType.MatchString(event) {
		return consumer{}, fmt.Errorf("--event %q: want an event type (order.placed)", event)
	}
	c := consumer{Name: queue, Pkg: strings.ReplaceAll(queue, "-", ""), Event: event, Module: module}
	c.Prefix = c.unit().KeyPrefix()
	return c, nil
}

// unit is the consumer as the consumer unit defines its resources: built by the project's
// Makefile (build-<LogicalId>) from the project's root.
func (c consumer) unit() consumerunit.Consumer {
	return consumerunit.Consumer{Name: c.Name, Types: []string{c.Event}}
}

// files are the consumer's files by path and the template that writes each.
func (c consumer) files() []file {
	return []file{
		{filepath.Join("internal", c.Pkg, c.Pkg+".go"), "handler.go.tmpl"},
		{filepath.Join("internal", c.Pkg, c.Pkg+"_test.go"), "handler_test.go.tmpl"},
		{filepath.Join("functions", c.Name, "main.go"), "main.go.tmpl"},
		{filepath.Join("cmd", "localrun", c.Name+"-key.go"), "localrun_key.go.tmpl"},
	}
}

// samplePath is its sample batch: make run's events are made from its first.
func (c consumer) samplePath() string { return filepath.Join("events", c.Name+"-batch.json") }
