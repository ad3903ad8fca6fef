package main

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/onceflow/onceflow/infra/consumerunit"
)

// consumer is what the templates are written from.
type consumer struct {
	Name   string   // word-count: CONSUMER_NAME, functions/word-count
	ID     string   // WordCount: WordCountFunction, WordCountQueue, ...
	Pkg    string   // wordcount: internal/wordcount
	Prefix string   // WORD_COUNT: the partition keys it writes, WORD_COUNT#...
	Types  []string // the event types routed to its queue
}

var (
	validName = regexp.MustCompile(`^[a-z][a-z0-9]*(-[a-z0-9]+)*$`)
	validType = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]*$`)
)

func newConsumer(name string, types []string) (*consumer, error) {
	if !validName.MatchString(name) {
		return nil, fmt.Errorf("name %q: want lower-case words joined by '-' (word-count)", name)
	}
	var ts []string
	for _, t := range types {
		if t = strings.TrimSpace(t); !validType.MatchString(t) {
			return nil, fmt.Errorf("type %q: want an event type (note.created)", t)
		}
		ts = append(ts, t)
	}
	u := consumerunit.Consumer{Name: name}
	return &consumer{Name: name, ID: u.ID(), Pkg: strings.ReplaceAll(name, "-", ""), Prefix: u.KeyPrefix(), Types: ts}, nil
}

// TypeList is the event types, comma-separated.
func (c *consumer) TypeList() string { return strings.Join(c.Types, ",") }

// writtenBy is the note under the banner of a unit make consumer wrote.
const writtenBy = "Written by `make consumer NAME="

// unit is the consumer's unit (infra/consumerunit) as make consumer writes it: a GoOn
// consumer (its main's failure policy) of the application, noted as make consumer's.
func (c *consumer) unit() consumerunit.Unit {
	u := consumerunit.Consumer{Name: c.Name, Types: c.Types}.Unit()
	u.Note = writtenBy + c.Name + " TYPE=" + c.TypeList() + "` (docs/consumer.md)."
	return u
}
