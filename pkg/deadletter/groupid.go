package deadletter

import (
	"crypto/sha256"
	"encoding/hex"
)

// maxGroupID is the longest MessageGroupId SQS accepts.
const maxGroupID = 128

// GroupID is a group's name as an SQS MessageGroupId, where SQS requires a valid one (a FIFO
// dead-letter queue's group, a redrive's): the name itself when SQS accepts it (1 to 128
// characters, letters, digits and ASCII punctuation), else "sha256-" and its hex digest, the
// same for every record of the group. Only SQS sees the digest: the letter keeps the name as
// it is (AttrSourceGroupID), which the hold, the operator's tool and its user go by.
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
