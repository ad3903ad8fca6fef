// Package batchtest is the conformance suite of the engine's ports, written once and run by
// every port's tests (go-cloud's drivertest pattern): a port's test implements Harness over
// its records and its handler, and Run checks, against DynamoDB Local, the behaviour every port
// of the batch core has (each event applied once across a batch and its redeliveries, order per
// group, a transient failure holding back the rest of its group, a permanent one dead-lettered
// with its reason under the consumer's group policy, a duplicate not applied again). A port
// written outside this module runs it the same way.
package batchtest
