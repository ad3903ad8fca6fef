// Package localcloud runs a SAM application on real local emulators, without Docker: Amazon's
// DynamoDB Local and the fauxqs SQS emulator, with every table and queue of template.yaml
// created from the template itself, each function built for the host and run under the AWS
// Lambda Runtime Interface Emulator, SQS and DynamoDB stream event source mappings emulated by
// pollers that invoke through the Lambda Invoke API, and a loopback HTTP API that speaks API
// Gateway HTTP API (payload 2.0) events. An OpenID Connect issuer of its own (a key made at
// start, discovery, JWKS and a token endpoint for development) stands in for the template's:
// the HTTP API enforces the template's JWT authorizers with it, as API Gateway does. Every
// listener, its own and the emulators', is on 127.0.0.1.
//
// Config.Chaos injects faults where AWS would: functions then reach DynamoDB and SQS through a
// loopback proxy each that throttles, answers 500, cancels transactions with a
// TransactionConflict, resets connections before forwarding or after the emulator answered,
// and adds latency, and environments are killed during and after invocations; Stats.Faults
// counts every fault by kind.
//
// Start returns a running Cloud and its Endpoints; Close (or Down, from another process)
// stops exactly the processes it started.
package localcloud
