// Package config is the one place the functions read environment variables. Each function role
// has a loader (LoadAPI, LoadRelay, LoadConsumer, LoadNotifier) that takes a getenv function,
// applies defaults, and validates, collecting every problem with errors.Join, so a
// misconfigured function fails at init with one message that names each missing or bad
// variable.
package config
