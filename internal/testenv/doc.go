// Package testenv connects tests and benchmarks to the local emulators that
// infra/emulators.sh starts (DynamoDB Local, fauxqs), creates uniquely named resources so
// suites run in parallel against shared emulators, and counts the API requests a client makes.
package testenv
