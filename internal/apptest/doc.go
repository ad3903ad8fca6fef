// Package apptest holds what the application's integration tests share on top of testenv: the
// app table with its stream, FIFO queues, reading stream records and received messages as
// Lambda delivers them (with localaws's converters, which the local cloud uses too), and
// loading the samples in events/. Only tests import it.
package apptest
