package notify

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
)

// Headers of the signature every webhook request carries.
const (
	// TimestampHeader holds the time of signing, in whole seconds since the Unix epoch.
	TimestampHeader = "Webhook-Timestamp"
	// SignatureHeader holds "v1=" and the lowercase hex HMAC-SHA256 of the signed string.
	SignatureHeader = "Webhook-Signature"
)

// Sign returns the SignatureHeader value of a request with body, signed at timestamp (the
// TimestampHeader value): "v1=" + hex(HMAC-SHA256(secret, timestamp + "." + body)), over the
// body's exact bytes. A receiver recomputes it with its copy of the secret, compares in
// constant time, and rejects a timestamp too far from its clock (replays).
func Sign(secret []byte, timestamp string, body []byte) string {
	mac := hmac.New(sha256.New, secret)
	mac.Write([]byte(timestamp))
	mac.Write([]byte("."))
	mac.Write(body)
	return "v1=" + hex.EncodeToString(mac.Sum(nil))
}
