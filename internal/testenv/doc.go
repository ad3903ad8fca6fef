// Package testenv connects tests and benchmarks to the local emulators that
// infra/emulators.sh starts (DynamoDB Local, fauxqs), creates uniquely named resources so
// suites run in parallel against shared emulators, and counts the API requests a client makes.
// It plays IAM between real components: DenyProxy answers chosen calls as AWS answers a role
// that lacks the permission, and records every call as IAM would authorise it; Logs, EMF and
// CheckDenied read what a port logged and counted of a denial, StreamDenials runs the denial
// cases on any stream port.
package testenv
