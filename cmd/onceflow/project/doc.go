// Package project writes a project of one's own consumers outside the onceflow repository:
// onceflow init (Init) and onceflow add-consumer (Add). A project is a Go module requiring the
// engine (github.com/onceflow/onceflow/pkg), one package and one Lambda main per consumer, a
// SAM template made of the consumer unit (infra/consumerunit) so that it cannot drift from the
// demo's consumers, sample events, and a Makefile whose test, run and deploy targets test it,
// run it on the local cloud with its invariants, and deploy it with SAM.
package project
