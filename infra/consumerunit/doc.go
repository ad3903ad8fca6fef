// Package consumerunit is the consumer unit: the resources of one SQS FIFO consumer of a SAM
// template (its FIFO queue and FIFO dead-letter queue, the event source mapping, its function
// with a least-privilege role, its log group, its alarms and the outputs the operator's tool
// reads), defined once. The example application's template, make consumer and onceflow init
// all write their consumers from it (docs/deploy.md, the consumer unit).
package consumerunit
