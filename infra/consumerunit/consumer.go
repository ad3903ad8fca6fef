package consumerunit

import (
	"strings"
)

// Consumer is one SQS FIFO consumer of a project: its queue and FIFO dead-letter queue, the
// event source mapping (ReportBatchItemFailures, maximum concurrency), its function and
// least-privilege role, its log group, its alarms (named "${AWS::StackName}-<name>-..."), its
// outputs for the operator CLI. Its unit is Consumer.Unit.
type Consumer struct {
	Name    string   // kebab-case: "orders" (CONSUMER_NAME, key prefix "orders#", alarm names)
	Types   []string // the CloudEvent types it applies, e.g. ["order.placed"]
	CodeUri string   // the function's directory for SAM, e.g. "functions/orders" ("" -> ".")
	// HoldGroup: its failure policy is idempotency.HoldGroup, so its role may check and delete
	// its groups' holds; false (the engine's default, GoOn) grants its records only.
	HoldGroup bool
}

// ID is the CamelCase logical-id stem: "orders" -> "Orders" (OrdersQueue, OrdersFunction, ...).
func (c Consumer) ID() string {
	var id string
	for _, w := range strings.Split(c.Name, "-") {
		if w != "" {
			id += strings.ToUpper(w[:1]) + w[1:]
		}
	}
	return id
}

// KeyPrefix is the prefix of the application table's partition keys the consumer may write:
// "word-count" -> "WORD_COUNT" (its role grants AppTable writes under "WORD_COUNT#*").
func (c Consumer) KeyPrefix() string {
	return strings.ToUpper(strings.ReplaceAll(c.Name, "-", "_"))
}

// Unit is the consumer's unit: a function and queues named by its ID, writing its effects
// under KeyPrefix in AppTable, with the grants of its failure policy, reading claim checks
// from PayloadBucket.
func (c Consumer) Unit() Unit {
	return Unit{
		Name:        c.Name,
		ID:          c.ID(),
		QueueID:     c.ID(),
		Description: "Applies each " + strings.Join(c.Types, ",") + " event once (" + c.Name + ").",
		CodeURI:     c.CodeUri,
		Types:       c.Types,
		Writes:      []string{c.KeyPrefix() + "#*"},
		HoldGroup:   c.HoldGroup,
		ClaimChecks: true,
	}
}
