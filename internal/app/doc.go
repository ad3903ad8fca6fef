// Package app composes each Lambda function of the application from its configuration and
// clients: the functions' main packages only load configuration, build SDK clients once and
// start the runtime, and tests run exactly the handlers the functions run.
package app
