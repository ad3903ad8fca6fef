package lease_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/onceflow/onceflow/pkg/cloudevent"
	"github.com/onceflow/onceflow/pkg/idempotency"
	"github.com/onceflow/onceflow/pkg/lease"
)

func TestNewLeased_rejects_an_invalid_config(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		cfg  lease.Config
		want string
	}{
		{"heartbeat not shorter than the lease", lease.Config{Config: idempotency.Config{Name: "n", Table: "t"},
			Lease: time.Second, Heartbeat: time.Second}, "shorter than the lease"},
		{"negative wait", lease.Config{Config: idempotency.Config{Name: "n", Table: "t"},
			WaitForCompletion: -time.Second}, "wait for completion"},
		{"no name", lease.Config{Config: idempotency.Config{Table: "t"}}, "Config.Name"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			noop := lease.SideEffectFunc(func(context.Context, cloudevent.Event, string) error { return nil })
			_, err := lease.New(fakeDB{}, noop, tt.cfg)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("NewLeased = %v; want an error mentioning %q", err, tt.want)
			}
		})
	}
}

// fakeDB satisfies idempotency.DB for tests that never reach DynamoDB.
type fakeDB struct{ idempotency.DB }

func TestNewLeased_refuses_HoldGroup(t *testing.T) {
	t.Parallel()
	noop := lease.SideEffectFunc(func(context.Context, cloudevent.Event, string) error { return nil })
	_, err := lease.New(fakeDB{}, noop, lease.Config{Config: idempotency.Config{Name: "n", Table: "t",
		AfterDeadLetter: idempotency.HoldGroup}})
	if err == nil || !strings.Contains(err.Error(), "HoldGroup") {
		t.Errorf("NewLeased = %v; want HoldGroup refused in lease mode", err)
	}
}
