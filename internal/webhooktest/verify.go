package webhooktest

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// MaxSkew is how far a call's Webhook-Timestamp may be from the receiver's clock.
const MaxSkew = 5 * time.Minute

// verify checks a call's signature as docs/application.md ("The webhook signature") documents it for any receiver, written
// here independently of the sender's code: Webhook-Signature is "v2=" and the lowercase hex of
// HMAC-SHA256(secret, Webhook-Timestamp + "." + Idempotency-Key + "." + body), the key holds
// no '.', and the timestamp (Unix seconds) is within MaxSkew of now. Scheme v1, which did not
// cover the key, is refused.
func verify(secret []byte, h http.Header, body []byte, now time.Time) error {
	ts, sig, key := h.Get("Webhook-Timestamp"), h.Get("Webhook-Signature"), h.Get("Idempotency-Key")
	if ts == "" || sig == "" {
		return errors.New("missing Webhook-Timestamp or Webhook-Signature")
	}
	if key == "" || strings.Contains(key, ".") {
		return errors.New("missing Idempotency-Key, or one holding '.'")
	}
	sec, err := strconv.ParseInt(ts, 10, 64)
	if err != nil {
		return errors.New("Webhook-Timestamp is not whole seconds")
	}
	if d := now.Sub(time.Unix(sec, 0)); d > MaxSkew || d < -MaxSkew {
		return errors.New("Webhook-Timestamp is too far from now")
	}
	got, ok := strings.CutPrefix(sig, "v2=")
	if !ok {
		return errors.New("Webhook-Signature is not v2")
	}
	mac := hmac.New(sha256.New, secret)
	mac.Write([]byte(ts + "." + key + "." + string(body)))
	want := hex.EncodeToString(mac.Sum(nil))
	if !hmac.Equal([]byte(got), []byte(want)) {
		return errors.New("Webhook-Signature does not match")
	}
	return nil
}
