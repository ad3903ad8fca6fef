package main

import (
	"fmt"
	"maps"
	"slices"
	"strings"
)

// Output names the tool reads from a stack (CloudFormation outputs, or the "outputs" of
// .local/endpoints.json): <LogicalId>QueueUrl for each queue, <LogicalId>TableName for each
// table, and these.
const (
	// outputRoutes is the relay's routes: TYPE=QUEUE_URL pairs, comma-separated, a type once
	// per queue that receives it (the form of --route).
	outputRoutes = "OutboxRoutes"
	// outputConsumers is the consumers' names (their CONSUMER_NAME), comma-separated.
	outputConsumers = "ConsumerNames"
	// outputReplays is the stream consumers' replay queues: DEAD_LETTER_QUEUE_URL=REPLAY_QUEUE_URL
	// pairs, comma-separated; dlq redrive sends a stream consumer's letters to its replay queue.
	outputReplays = "ReplayQueues"
)

// Logical ids of the tables the record, hold and outbox commands use when --table is not given.
const (
	idempotencyTable = "IdempotencyTable"
	appTable         = "AppTable"
)

// stack is what the tool knows of a deployment by logical id: its queues, tables, the relay's
// routes and the consumers' names. The zero stack knows nothing: every name is taken as given.
type stack struct {
	from      string            // where it was read, for messages: "stack NAME", ".local/endpoints.json"
	queues    map[string]string // logical id → queue URL
	tables    map[string]string // logical id → table name
	routes    string            // the OutboxRoutes output; "" if unknown
	consumers []string          // the consumers' names; nil if unknown
	replays   map[string]string // a stream consumer's dead-letter queue URL → its replay queue URL
}

// stackFromOutputs reads a stack from its outputs.
func stackFromOutputs(from string, outputs map[string]string) *stack {
	s := &stack{from: from, queues: map[string]string{}, tables: map[string]string{}, routes: outputs[outputRoutes],
		replays: map[string]string{}}
	for k, v := range outputs {
		if id, ok := strings.CutSuffix(k, "QueueUrl"); ok {
			s.queues[id+"Queue"] = v
		}
		if id, ok := strings.CutSuffix(k, "TableName"); ok {
			s.tables[id+"Table"] = v
		}
	}
	for _, pair := range strings.Split(outputs[outputReplays], ",") {
		if dl, replay, ok := strings.Cut(strings.TrimSpace(pair), "="); ok && dl != "" && replay != "" {
			s.replays[dl] = replay
		}
	}
	for _, c := range strings.Split(outputs[outputConsumers], ",") {
		if c = strings.TrimSpace(c); c != "" {
			s.consumers = append(s.consumers, c)
		}
	}
	return s
}

// replayQueue returns the replay queue of the stream consumer whose dead-letter queue is dlq,
// and whether dlq is one.
func (s *stack) replayQueue(dlq string) (string, bool) {
	if s == nil {
		return "", false
	}
	url, ok := s.replays[dlq]
	return url, ok
}

// queue returns the URL of the queue of logical id name, and whether the stack has it.
func (s *stack) queue(name string) (string, bool) {
	url, ok := s.queues[name]
	return url, ok
}

// unknownQueue is the error for a queue name the stack does not have.
func (s *stack) unknownQueue(name string) error {
	return usageError(fmt.Sprintf("unknown queue %q: %s has %s (or give a queue URL)", name, s.from, list(slices.Collect(maps.Keys(s.queues)))))
}

// table resolves a table: a logical id of the stack, or one of its table names. With a stack
// that lists no tables, or no stack, name is taken as a table name.
func (s *stack) table(name string) (string, error) {
	if s == nil || len(s.tables) == 0 {
		return name, nil
	}
	if tb, ok := s.tables[name]; ok {
		return tb, nil
	}
	if slices.Contains(slices.Collect(maps.Values(s.tables)), name) {
		return name, nil
	}
	return "", usageError(fmt.Sprintf("unknown table %q: %s has %s", name, s.from, list(slices.Collect(maps.Keys(s.tables)))))
}

// consumer checks a consumer's name against the ones the stack names, if it names any.
func (s *stack) consumer(name string) error {
	if s == nil || len(s.consumers) == 0 || slices.Contains(s.consumers, name) {
		return nil
	}
	return usageError(fmt.Sprintf("unknown consumer %q: %s has %s", name, s.from, list(s.consumers)))
}

// list is names sorted and comma-separated, or "none".
func list(names []string) string {
	if len(names) == 0 {
		return "none"
	}
	return strings.Join(slices.Sorted(slices.Values(names)), ", ")
}
