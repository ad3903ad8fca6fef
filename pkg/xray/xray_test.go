package xray_test

import (
	"context"
	"regexp"
	"testing"
	"time"

	"github.com/onceflow/onceflow/pkg/xray"
)

func TestTraceID_is_the_root_of_a_header(t *testing.T) {
	cases := []struct{ name, header, want string }{
		{"root first", "Root=1-5759e988-bd862e3fe1be46a994272793;Parent=53995c3f42cd8ad8;Sampled=1", "1-5759e988-bd862e3fe1be46a994272793"},
		{"root after another field", "Self=1-abc;Root=1-5759e988-bd862e3fe1be46a994272793", "1-5759e988-bd862e3fe1be46a994272793"},
		{"spaces around fields", " Root=1-5759e988-bd862e3fe1be46a994272793 ; Sampled=0", "1-5759e988-bd862e3fe1be46a994272793"},
		{"no root", "Parent=53995c3f42cd8ad8", ""},
		{"empty", "", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := xray.TraceID(c.header); got != c.want {
				t.Errorf("TraceID(%q) = %q, want %q", c.header, got, c.want)
			}
		})
	}
}

func TestFromContext_prefers_the_messages_trace_over_the_invocations(t *testing.T) {
	//nolint:staticcheck // the string key is aws-lambda-go's, as its invoke loop sets it
	invocation := context.WithValue(context.Background(), "x-amzn-trace-id", "Root=1-00000001-invocation")
	cases := []struct {
		name string
		ctx  context.Context
		want string
	}{
		{"nothing", context.Background(), ""},
		{"the Lambda invocation's", invocation, "Root=1-00000001-invocation"},
		{"the message's over the invocation's", xray.NewContext(invocation, "Root=1-00000002-message"), "Root=1-00000002-message"},
		{"an empty header changes nothing", xray.NewContext(invocation, ""), "Root=1-00000001-invocation"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := xray.FromContext(c.ctx); got != c.want {
				t.Errorf("FromContext = %q, want %q", got, c.want)
			}
		})
	}
}

func TestNewHeader_is_a_sampled_X_Ray_header_of_its_time(t *testing.T) {
	now := time.Unix(0x5759e988, 0)
	h := xray.NewHeader(now)
	if !regexp.MustCompile(`^Root=1-5759e988-[0-9a-f]{24};Parent=[0-9a-f]{16};Sampled=1$`).MatchString(h) {
		t.Errorf("NewHeader = %q", h)
	}
	if other := xray.NewHeader(now); xray.TraceID(other) == xray.TraceID(h) {
		t.Errorf("two headers share the trace id %q", xray.TraceID(h))
	}
}
