package workload

import (
	"fmt"
	"path/filepath"
	"slices"
	"sort"

	"github.com/onceflow/onceflow/infra/localcloud"
	"github.com/onceflow/onceflow/internal/config"
)

// Cloud is what the workload needs of a running local cloud; *localcloud.Cloud implements it.
type Cloud interface {
	Endpoints() localcloud.Endpoints
	Stats() localcloud.Stats
	Functions() map[string]localcloud.Function
	StateDir() string
}

// consumer is an idempotent consumer function and its queues, as the template wires them.
type consumer struct {
	Function   string // logical id
	Mapping    string // "<Function>/<Event>", the key of its Stats
	Name       string // CONSUMER_NAME: the first part of its idempotency keys
	Queue      string // logical id of its source queue
	QueueURL   string
	DLQURL     string // DEAD_LETTER_QUEUE_URL
	EventTypes []string
}

// streamConsumer is an idempotent consumer of the app table's stream (pkg/dynamodbbatch) and
// its queues, as the template wires them: its dead letters, and the replay queue an operator
// redrives them to, which the same function consumes.
type streamConsumer struct {
	Function  string // logical id
	Mapping   string // "<Function>/<Event>" of its stream, the key of its Stats
	Name      string // CONSUMER_NAME
	DLQURL    string // DEAD_LETTER_QUEUE_URL
	ReplayURL string // the queue of its SQS event
}

// topology is the part of the application the workload touches.
type topology struct {
	appTable, idemTable string
	relay               string              // logical id of the function with the outbox stream
	relayMapping        string              // its Stats key
	routes              map[string][]string // event type → queue URLs, as the relay routes them
	consumers           []consumer          // sorted by function
	streams             []streamConsumer    // the stream consumers, sorted by function
	queues              map[string]string   // every queue: URL → logical id
	logs                string              // directory of the function logs
}

func discover(c Cloud) (*topology, error) {
	ep := c.Endpoints()
	t := &topology{appTable: ep.Tables["AppTable"].Name, idemTable: ep.Tables["IdempotencyTable"].Name,
		routes: map[string][]string{}, queues: map[string]string{}, logs: filepath.Join(c.StateDir(), "logs")}
	if t.appTable == "" || t.idemTable == "" {
		return nil, fmt.Errorf("the template has no AppTable or IdempotencyTable")
	}
	for id, q := range ep.Queues {
		t.queues[q.URL] = id
	}
	fns := c.Functions()
	ids := make([]string, 0, len(fns))
	for id := range fns {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		f := fns[id]
		if sc, ok := streamConsumerOf(id, f, ep); ok {
			if err := sc.check(); err != nil {
				return nil, err
			}
			t.streams = append(t.streams, sc)
			continue
		}
		for _, ev := range f.Events {
			switch ev.Type {
			case localcloud.EventDynamoDB:
				t.relay, t.relayMapping = id, id+"/"+ev.Name
				relay, err := config.LoadRelay(func(k string) string { return f.Env[k] })
				if err != nil {
					return nil, fmt.Errorf("relay %s: %w", id, err)
				}
				t.routes = relay.Routes
			case localcloud.EventSQS:
				t.consumers = append(t.consumers, consumer{Function: id, Mapping: id + "/" + ev.Name,
					Name: f.Env[config.ConsumerName], Queue: ev.Source, QueueURL: ep.Queues[ev.Source].URL,
					DLQURL: f.Env[config.DeadLetterQueueURL]})
			}
		}
	}
	if t.relay == "" || len(t.consumers) == 0 {
		return nil, fmt.Errorf("the template has no outbox relay or no SQS consumer")
	}
	for i := range t.consumers {
		c := &t.consumers[i]
		for typ, urls := range t.routes {
			if slices.Contains(urls, c.QueueURL) {
				c.EventTypes = append(c.EventTypes, typ)
			}
		}
		sort.Strings(c.EventTypes)
		if c.Name == "" || c.DLQURL == "" || len(c.EventTypes) == 0 {
			return nil, fmt.Errorf("consumer %s: want CONSUMER_NAME, DEAD_LETTER_QUEUE_URL and a queue the relay routes to", c.Function)
		}
	}
	return t, nil
}

// streamConsumerOf is f as a stream consumer: a function with a CONSUMER_NAME and a DynamoDB
// stream event; ok is false for any other.
func streamConsumerOf(id string, f localcloud.Function, ep localcloud.Endpoints) (streamConsumer, bool) {
	sc := streamConsumer{Function: id, Name: f.Env[config.ConsumerName], DLQURL: f.Env[config.DeadLetterQueueURL]}
	for _, ev := range f.Events {
		switch ev.Type {
		case localcloud.EventDynamoDB:
			sc.Mapping = id + "/" + ev.Name
		case localcloud.EventSQS:
			sc.ReplayURL = ep.Queues[ev.Source].URL
		}
	}
	return sc, sc.Name != "" && sc.Mapping != ""
}

// check says what a stream consumer lacks of what the workload drives and verifies.
func (sc streamConsumer) check() error {
	if sc.DLQURL == "" || sc.ReplayURL == "" {
		return fmt.Errorf("stream consumer %s: want DEAD_LETTER_QUEUE_URL and an SQS event of its replay queue", sc.Function)
	}
	return nil
}

// sourceQueues returns the URLs of the queues consumers read: the SQS consumers' queues and the
// stream consumers' replay queues.
func (t *topology) sourceQueues() []string {
	var out []string
	for _, c := range t.consumers {
		out = append(out, c.QueueURL)
	}
	for _, sc := range t.streams {
		out = append(out, sc.ReplayURL)
	}
	return out
}

// consumersOf returns the consumers that receive events of typ.
func (t *topology) consumersOf(typ string) []consumer {
	var out []consumer
	for _, c := range t.consumers {
		if slices.Contains(c.EventTypes, typ) {
			out = append(out, c)
		}
	}
	return out
}
