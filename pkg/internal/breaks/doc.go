// Package breaks is the Go counterpart of the recovery model's BREAK list
// (docs/recovery-model.md): its test breaks each step of the protocol in turn, in a copy of the
// step's file that go test -overlay builds in the file's place, and requires a test of the
// package that owns the step to fail. It has no code of its own.
package breaks
