// Package shop is a service outside the onceflow module that uses its engine as a library, as
// any Go team would: an idempotent consumer of order events, with its own tables. Its test runs
// in `make test` (from the main module's TestEngine_is_importable_by_another_module), so a
// change that breaks the public API breaks it.
package shop
