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
	// SignatureHeader holds "v2=" and the lowercase hex HMAC-SHA256 of the signed string.
	SignatureHeader = "Webhook-Signature"
	// IdempotencyKeyHeader holds the key a receiver deduplicates calls on (see IdempotencyKey);
	// the signature covers it.
	IdempotencyKeyHeader = "Idempotency-Key"
)

// Sign returns the SignatureHeader value of a request with body and the Idempotency-Key key,
// signed at timestamp (the TimestampHeader value):
//
//	"v2=" + hex(HMAC-SHA256(secret, timestamp + "." + key + "." + body))
//
// over the body's exact bytes. The key (lowercase hex, see IdempotencyKey) holds no '.', so the
// string splits one way only. A receiver recomputes it with its copy of the secret, compares in
// constant time, and rejects a timestamp too far from its clock (replays). Scheme v1 (timestamp
// and body only) is no longer sent: it let a replay change the key.
func Sign(secret []byte, timestamp, key string, body []byte) string {
	mac := hmac.New(sha256.New, secret)
	mac.Write([]byte(timestamp))
	mac.Write([]byte("."))
	mac.Write([]byte(key))
	mac.Write([]byte("."))
	mac.Write(body)
	return "v2=" + hex.EncodeToString(mac.Sum(nil))
}
