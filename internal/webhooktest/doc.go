// Package webhooktest is a webhook receiver on 127.0.0.1 that records every call it answers: its
// method, headers, body and the status it answered, which a test or the caller's Respond function
// chooses. Tests start one with Start; the local cloud starts one with NewReceiver as the webhook
// it runs the application against, so the package does not import testing.
package webhooktest
