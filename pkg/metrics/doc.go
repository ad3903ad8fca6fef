// Package metrics is the engine's metrics seam. The engine reports through the small Recorder
// interface, so any metrics system can be plugged in; EMF is the implementation for Lambda: it
// writes CloudWatch Embedded Metric Format lines, one JSON log line per flush, which CloudWatch
// turns into metrics with no API call from the function.
package metrics
