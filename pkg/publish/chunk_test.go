package publish

import (
	"strings"
	"testing"
)

func TestChunkEnd_keeps_one_message_per_group_in_a_batch(t *testing.T) {
	msg := func(group string, size int) Message { return Message{GroupID: group, Body: strings.Repeat("x", size)} }
	cases := []struct {
		name  string
		msgs  []Message
		start int
		want  int
	}{
		{"distinct groups fill a batch", []Message{msg("a", 1), msg("b", 1), msg("c", 1)}, 0, 3},
		{"a repeated group starts a new batch", []Message{msg("a", 1), msg("b", 1), msg("a", 1), msg("c", 1)}, 0, 2},
		{"the next batch starts at the repeat", []Message{msg("a", 1), msg("b", 1), msg("a", 1), msg("c", 1)}, 2, 4},
		{"standard queue messages have no group", []Message{msg("", 1), msg("", 1), msg("", 1)}, 0, 3},
		{"at most MaxBatch", func() []Message {
			var ms []Message
			for i := range MaxBatch + 2 {
				ms = append(ms, msg(string(rune('a'+i)), 1))
			}
			return ms
		}(), 0, MaxBatch},
		{"size limit", []Message{msg("a", maxBatchBytes-10), msg("b", 20)}, 0, 1},
		{"one oversized message is a batch of its own", []Message{msg("a", maxBatchBytes+1), msg("b", 1)}, 0, 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := chunkEnd(tc.msgs, tc.start); got != tc.want {
				t.Errorf("chunkEnd = %d, want %d", got, tc.want)
			}
		})
	}
}
