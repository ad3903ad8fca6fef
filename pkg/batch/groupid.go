package batch

import (
	"crypto/sha256"
	"encoding/hex"
)

// maxGroupID is the longest MessageGroupId SQS accepts.
const maxGroupID = 128

// GroupID is key as an SQS MessageGroupId, for a stream record sent to a FIFO dead-letter
// queue: key itself when SQS accepts it (1 to 128 characters, letters, digits and ASCII
// punctuation), else "sha256-" and its hex digest, the same for every record of the key.
func GroupID(key string) string {
	if key != "" && len(key) <= maxGroupID && validGroupChars(key) {
		return key
	}
	sum := sha256.Sum256([]byte(key))
	return "sha256-" + hex.EncodeToString(sum[:])
}

func validGroupChars(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < '!' || c > '~' {
			return false
		}
	}
	return true
}
