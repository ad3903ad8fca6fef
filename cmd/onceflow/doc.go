// Command onceflow is the operator's tool for a deployed onceflow stack, or the local cloud
// with --local: it lists, shows and redrives dead letters (dlq), inspects and clears a
// consumer's idempotency record of an event (record) and a group held behind a dead letter
// (hold), and re-sends outbox events the relay failed to publish (outbox republish).
// Against AWS it uses the default credential chain and finds queues, tables, routes and
// consumers in a stack's outputs (--stack) or in flags; with --local it reads them from the
// .local/endpoints.json a running local cloud wrote. Its init and add-consumer write a project
// of one's own consumers outside the repository (package project). It links only the engine's
// public packages and the consumer unit's template text: go install
// github.com/onceflow/onceflow/cmd/onceflow.
package main
