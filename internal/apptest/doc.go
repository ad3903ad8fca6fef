// Package apptest holds what the application's integration tests share on top of testenv: the
// app table with its stream, FIFO queues, reading stream records as Lambda delivers them,
// receiving messages, and loading the samples in events/. Only tests import it.
package apptest
