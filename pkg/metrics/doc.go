// Package metrics records counters and latencies and writes them as CloudWatch Embedded Metric
// Format (EMF) lines: one JSON log line per flush, which CloudWatch turns into metrics with no
// API call from the function.
package metrics
