package batch

import "github.com/onceflow/onceflow/pkg/deadletter"

// GroupID is key as an SQS MessageGroupId: deadletter.GroupID, which a dead-letter queue's
// letters are grouped by while they keep the key itself.
func GroupID(key string) string { return deadletter.GroupID(key) }
