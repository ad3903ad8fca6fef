// Package testenv holds what the engine's own tests share beyond the public test kit
// (pkg/testkit and its fault injection, pkg/testkit/fault): a request counter for SDK clients,
// the logs and EMF metrics a port wrote, and the denial and replay cases every stream port
// runs (StreamDenials, StreamReplay).
package testenv
