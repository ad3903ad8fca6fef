// Package xray carries an AWS X-Ray trace header (the X-Amzn-Trace-Id value,
// "Root=1-5759e988-bd862e3fe1be46a994272793;Parent=53995c3f42cd8ad8;Sampled=1") from where
// it enters to where it is logged or sent on: the context of a Lambda invocation (where
// aws-lambda-go puts it), an outbox item, an SQS message's AWSTraceHeader system attribute.
// The engine uses it so that the request that wrote an event, the relay that sent it and the
// consumer that applied it share one trace id in X-Ray and in the logs.
package xray
