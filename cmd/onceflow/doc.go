// Command onceflow is the operator's tool for a deployed onceflow stack, or the local cloud
// with --local: it lists, shows and redrives dead letters (dlq), inspects and clears a
// consumer's idempotency record of an event (record) and a group held behind a dead letter
// (hold), and re-sends outbox events the relay failed to publish (outbox republish).
// Against AWS it uses the default credential chain; with --local it reads the endpoints,
// queues and tables a running local cloud wrote to .local/endpoints.json.
package main
