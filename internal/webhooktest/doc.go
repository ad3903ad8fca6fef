// Package webhooktest is a webhook receiver on 127.0.0.1 that records every call it answers: its
// method, headers, body and the status it answered, which a test or the caller's Respond function
// chooses. It checks every call's signature (Webhook-Timestamp, Webhook-Signature: HMAC-SHA256
// with its Secret over timestamp + "." + body), implemented from the documented scheme rather
// than the sender's code, and answers 401 to a call without a valid one. Tests start one with Start; the local cloud starts one with NewReceiver as the webhook
// it runs the application against, so the package does not import testing.
package webhooktest
