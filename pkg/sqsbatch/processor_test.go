package sqsbatch_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/onceflow/onceflow/pkg/batch"
	"github.com/onceflow/onceflow/pkg/cloudevent"
	"github.com/onceflow/onceflow/pkg/metrics"
	"github.com/onceflow/onceflow/pkg/sqsbatch"
)

const (
	fifoARN     = "arn:aws:sqs:us-east-1:000000000000:orders.fifo"
	standardARN = "arn:aws:sqs:us-east-1:000000000000:orders"
)

// fifo builds a FIFO event from "group/id" specs, e.g. fifo("a/1", "b/1", "a/2").
func fifo(specs ...string) events.SQSEvent {
	var ev events.SQSEvent
	for _, s := range specs {
		g, _, _ := strings.Cut(s, "/")
		ev.Records = append(ev.Records, events.SQSMessage{
			MessageId: s, Body: "body of " + s, EventSourceARN: fifoARN, EventSource: "aws:sqs",
			Attributes: map[string]string{"MessageGroupId": g, "ApproximateReceiveCount": "1"},
		})
	}
	return ev
}

// standard builds a standard-queue event of messages with the given ids.
func standard(ids ...string) events.SQSEvent {
	var ev events.SQSEvent
	for _, id := range ids {
		ev.Records = append(ev.Records, events.SQSMessage{
			MessageId: id, Body: "body of " + id, EventSourceARN: standardARN, EventSource: "aws:sqs",
			Attributes: map[string]string{"ApproximateReceiveCount": "1"},
		})
	}
	return ev
}

// recorder is a MessageHandler that records the order of calls and fails as told.
type recorder struct {
	mu      sync.Mutex
	calls   []string
	results map[string]error // by message id; nil means success
	panics  map[string]bool
	sleep   time.Duration
}

func (r *recorder) HandleMessage(ctx context.Context, msg events.SQSMessage) error {
	r.mu.Lock()
	r.calls = append(r.calls, msg.MessageId)
	err, panics := r.results[msg.MessageId], r.panics[msg.MessageId]
	r.mu.Unlock()
	time.Sleep(r.sleep)
	if panics {
		panic("boom in " + msg.MessageId)
	}
	return err
}

func (r *recorder) called() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.calls)
}

// callsOf returns the recorded calls of group g, in call order.
func (r *recorder) callsOf(g string) []string {
	var out []string
	for _, id := range r.called() {
		if strings.HasPrefix(id, g+"/") {
			out = append(out, id)
		}
	}
	return out
}

func failures(resp events.SQSEventResponse) []string {
	ids := []string{}
	for _, f := range resp.BatchItemFailures {
		ids = append(ids, f.ItemIdentifier)
	}
	return ids
}

func newProcessor(t *testing.T, h sqsbatch.MessageHandler, cfg sqsbatch.HandlerConfig) *sqsbatch.Processor {
	t.Helper()
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	p, err := sqsbatch.New(h, cfg)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return p
}

func handle(t *testing.T, p *sqsbatch.Processor, ctx context.Context, ev events.SQSEvent) events.SQSEventResponse {
	t.Helper()
	resp, err := p.Handle(ctx, ev)
	if err != nil {
		t.Fatalf("Handle returned an error: %v", err)
	}
	return resp
}

// permanent is an error that says retrying cannot help.
type permanent struct{ msg string }

func (e permanent) Error() string   { return e.msg }
func (e permanent) Permanent() bool { return true }

// notPermanent has the method but answers false.
type notPermanent struct{}

func (notPermanent) Error() string   { return "looks permanent, is not" }
func (notPermanent) Permanent() bool { return false }

func TestProcessor_acknowledges_every_message_the_handler_accepts(t *testing.T) {
	tests := []struct {
		name string
		ev   events.SQSEvent
	}{
		{"empty batch", events.SQSEvent{}},
		{"fifo", fifo("a/1", "a/2", "b/1")},
		{"standard", standard("1", "2", "3")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := &recorder{}
			resp := handle(t, newProcessor(t, h, sqsbatch.HandlerConfig{}), t.Context(), tt.ev)
			if got := failures(resp); len(got) != 0 {
				t.Errorf("failures = %v; want none", got)
			}
			if resp.BatchItemFailures == nil {
				t.Error("BatchItemFailures is nil; want an empty list")
			}
			if got := len(h.called()); got != len(tt.ev.Records) {
				t.Errorf("handler called %d times; want %d", got, len(tt.ev.Records))
			}
		})
	}
}

func TestProcessor_handles_each_group_in_batch_order(t *testing.T) {
	var ev events.SQSEvent
	for i := range 6 {
		for _, g := range []string{"a", "b", "c", "d"} {
			ev.Records = append(ev.Records, fifo(fmt.Sprintf("%s/%d", g, i)).Records...)
		}
	}
	h := &recorder{sleep: time.Millisecond}
	resp := handle(t, newProcessor(t, h, sqsbatch.HandlerConfig{Concurrency: 4}), t.Context(), ev)
	if got := failures(resp); len(got) != 0 {
		t.Fatalf("failures = %v; want none", got)
	}
	for _, g := range []string{"a", "b", "c", "d"} {
		want := []string{g + "/0", g + "/1", g + "/2", g + "/3", g + "/4", g + "/5"}
		if got := h.callsOf(g); !slices.Equal(got, want) {
			t.Errorf("group %s handled in order %v; want %v", g, got, want)
		}
	}
}

func TestProcessor_failure_skips_only_the_rest_of_its_group(t *testing.T) {
	boom := errors.New("boom")
	tests := []struct {
		name         string
		ev           events.SQSEvent
		fail         []string
		wantCalls    map[string][]string // by group
		wantFailures []string
	}{
		{
			name: "first of group fails",
			ev:   fifo("a/1", "b/1", "a/2", "b/2", "a/3"),
			fail: []string{"a/1"},
			wantCalls: map[string][]string{
				"a": {"a/1"}, "b": {"b/1", "b/2"},
			},
			wantFailures: []string{"a/1", "a/2", "a/3"},
		},
		{
			name: "middle of group fails",
			ev:   fifo("a/1", "a/2", "b/1", "a/3", "b/2"),
			fail: []string{"a/2"},
			wantCalls: map[string][]string{
				"a": {"a/1", "a/2"}, "b": {"b/1", "b/2"},
			},
			wantFailures: []string{"a/2", "a/3"},
		},
		{
			name: "last of group fails",
			ev:   fifo("a/1", "a/2", "b/1"),
			fail: []string{"a/2"},
			wantCalls: map[string][]string{
				"a": {"a/1", "a/2"}, "b": {"b/1"},
			},
			wantFailures: []string{"a/2"},
		},
		{
			name: "two groups fail, failures in batch order",
			ev:   fifo("b/1", "a/1", "c/1", "b/2", "a/2", "c/2"),
			fail: []string{"a/1", "b/1"},
			wantCalls: map[string][]string{
				"a": {"a/1"}, "b": {"b/1"}, "c": {"c/1", "c/2"},
			},
			wantFailures: []string{"b/1", "a/1", "b/2", "a/2"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := &recorder{results: map[string]error{}}
			for _, id := range tt.fail {
				h.results[id] = boom
			}
			resp := handle(t, newProcessor(t, h, sqsbatch.HandlerConfig{}), t.Context(), tt.ev)
			for g, want := range tt.wantCalls {
				if got := h.callsOf(g); !slices.Equal(got, want) {
					t.Errorf("group %s: handler called for %v; want %v", g, got, want)
				}
			}
			if got := failures(resp); !slices.Equal(got, tt.wantFailures) {
				t.Errorf("failures = %v; want %v", got, tt.wantFailures)
			}
		})
	}
}

// inFlight is a MessageHandler that measures how many calls run at once.
type inFlight struct {
	now, max atomic.Int64
	sleep    time.Duration
}

func (f *inFlight) HandleMessage(context.Context, events.SQSMessage) error {
	n := f.now.Add(1)
	for {
		m := f.max.Load()
		if n <= m || f.max.CompareAndSwap(m, n) {
			break
		}
	}
	time.Sleep(f.sleep)
	f.now.Add(-1)
	return nil
}

func TestProcessor_bounds_how_many_groups_run_at_once(t *testing.T) {
	manyGroups := func() events.SQSEvent {
		var specs []string
		for i := range 24 {
			specs = append(specs, fmt.Sprintf("g%d/1", i), fmt.Sprintf("g%d/2", i))
		}
		return fifo(specs...)
	}
	manyMessages := func() events.SQSEvent {
		var ids []string
		for i := range 24 {
			ids = append(ids, fmt.Sprint(i))
		}
		return standard(ids...)
	}
	tests := []struct {
		name        string
		concurrency int
		ev          events.SQSEvent
		want        int64
	}{
		{"one at a time", 1, manyGroups(), 1},
		{"three groups", 3, manyGroups(), 3},
		{"default", 0, manyGroups(), batch.DefaultConcurrency},
		{"standard queue", 5, manyMessages(), 5},
		{"one group is sequential", 8, fifo("a/1", "a/2", "a/3", "a/4"), 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := &inFlight{sleep: 15 * time.Millisecond}
			resp := handle(t, newProcessor(t, h, sqsbatch.HandlerConfig{Concurrency: tt.concurrency}), t.Context(), tt.ev)
			if got := failures(resp); len(got) != 0 {
				t.Fatalf("failures = %v; want none", got)
			}
			if got := h.max.Load(); got != tt.want {
				t.Errorf("at most %d messages in flight; want %d", got, tt.want)
			}
		})
	}
}

func TestProcessor_deadline_guard_reports_unstarted_messages_failed(t *testing.T) {
	t.Run("deadline already within the margin starts nothing", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(t.Context(), time.Second)
		defer cancel()
		h := &recorder{}
		ev := fifo("a/1", "a/2", "b/1")
		resp := handle(t, newProcessor(t, h, sqsbatch.HandlerConfig{}), ctx, ev) // default margin 2s
		if got := h.called(); len(got) != 0 {
			t.Errorf("handler called for %v; want no calls", got)
		}
		if got, want := failures(resp), []string{"a/1", "a/2", "b/1"}; !slices.Equal(got, want) {
			t.Errorf("failures = %v; want %v", got, want)
		}
	})
	t.Run("cancelled context starts nothing", func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		cancel()
		h := &recorder{}
		resp := handle(t, newProcessor(t, h, sqsbatch.HandlerConfig{}), ctx, standard("1", "2"))
		if got := h.called(); len(got) != 0 {
			t.Errorf("handler called for %v; want no calls", got)
		}
		if got, want := failures(resp), []string{"1", "2"}; !slices.Equal(got, want) {
			t.Errorf("failures = %v; want %v", got, want)
		}
	})
	t.Run("deadline approaching stops the group and answers in time", func(t *testing.T) {
		const timeout, margin, sleep = 1200 * time.Millisecond, 700 * time.Millisecond, 200 * time.Millisecond
		ctx, cancel := context.WithTimeout(t.Context(), timeout)
		defer cancel()
		h := &recorder{sleep: sleep}
		ev := fifo("a/1", "a/2", "a/3", "a/4", "a/5", "a/6")
		resp := handle(t, newProcessor(t, h, sqsbatch.HandlerConfig{DeadlineMargin: margin}), ctx, ev)
		if ctx.Err() != nil {
			t.Fatalf("Handle answered after the deadline")
		}
		called := h.called()
		// About (timeout-margin)/sleep messages fit; how many exactly depends on the scheduler.
		if len(called) == 0 || len(called) == len(ev.Records) {
			t.Fatalf("handler called for %v; want some but not all", called)
		}
		var want []string
		for _, m := range ev.Records[len(called):] {
			want = append(want, m.MessageId)
		}
		if got := failures(resp); !slices.Equal(got, want) {
			t.Errorf("failures = %v; want the unstarted %v", got, want)
		}
	})
}

func TestProcessor_recovers_a_panic_as_a_failure_of_that_message(t *testing.T) {
	var logs bytes.Buffer
	h := &recorder{panics: map[string]bool{"a/1": true}}
	p := newProcessor(t, h, sqsbatch.HandlerConfig{Logger: slog.New(slog.NewJSONHandler(&logs, nil))})
	resp := handle(t, p, t.Context(), fifo("a/1", "b/1", "a/2"))
	if got, want := failures(resp), []string{"a/1", "a/2"}; !slices.Equal(got, want) {
		t.Errorf("failures = %v; want %v", got, want)
	}
	if got, want := h.callsOf("b"), []string{"b/1"}; !slices.Equal(got, want) {
		t.Errorf("group b handled %v; want %v", got, want)
	}
	rec := findLog(t, &logs, "panic recovered")
	if rec["messageId"] != "a/1" || rec["group"] != "a" || !strings.Contains(fmt.Sprint(rec["reason"]), "boom in a/1") {
		t.Errorf("panic log = %v; want messageId a/1, group a, reason with the panic value", rec)
	}
	if !strings.Contains(fmt.Sprint(rec["stack"]), "goroutine") {
		t.Errorf("panic log has no stack: %v", rec["stack"])
	}
}

// deadLetters is a DeadLetterer that records what it is given and fails as told.
type deadLetters struct {
	mu      sync.Mutex
	got     map[string]error // message id -> reason
	err     error
	doPanic bool
}

func (d *deadLetters) DeadLetter(_ context.Context, msg events.SQSMessage, reason error) error {
	if d.doPanic {
		panic("dead-letter queue on fire")
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.got == nil {
		d.got = map[string]error{}
	}
	d.got[msg.MessageId] = reason
	return d.err
}

func TestProcessor_permanent_errors_are_dead_lettered_and_acknowledged(t *testing.T) {
	perm := permanent{"unknown event type"}
	tests := []struct {
		name             string
		err              error
		dl               *deadLetters // nil: no DeadLetter configured
		wantDeadLettered bool
		wantFailures     []string
		wantMetric       bool
	}{
		{"permanent error", perm, &deadLetters{}, true, []string{}, true},
		{"wrapped permanent error", fmt.Errorf("handle: %w", perm), &deadLetters{}, true, []string{}, true},
		{"malformed envelope", cloudevent.Malformed("id", "missing"), &deadLetters{}, true, []string{}, true},
		{"Permanent() false is retried", notPermanent{}, &deadLetters{}, false, []string{"a/2", "a/3"}, false},
		{"plain error is retried", errors.New("throttled"), &deadLetters{}, false, []string{"a/2", "a/3"}, false},
		{"dead-letter send fails", perm, &deadLetters{err: errors.New("sqs down")}, true, []string{"a/2", "a/3"}, false},
		{"dead-letterer panics", perm, &deadLetters{doPanic: true}, false, []string{"a/2", "a/3"}, false},
		{"no dead-letter queue configured", perm, nil, false, []string{"a/2", "a/3"}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var emf bytes.Buffer
			h := &recorder{results: map[string]error{"a/2": tt.err}}
			cfg := sqsbatch.HandlerConfig{Metrics: metrics.NewEMF(&emf, "onceflow", nil)}
			if tt.dl != nil {
				cfg.DeadLetter = tt.dl
			}
			resp := handle(t, newProcessor(t, h, cfg), t.Context(), fifo("a/1", "a/2", "a/3", "b/1"))
			if got := failures(resp); !slices.Equal(got, tt.wantFailures) {
				t.Errorf("failures = %v; want %v", got, tt.wantFailures)
			}
			if tt.dl != nil {
				reason, ok := tt.dl.got["a/2"]
				if ok != tt.wantDeadLettered {
					t.Fatalf("dead-lettered = %v; want %v", ok, tt.wantDeadLettered)
				}
				if ok && !errors.Is(reason, tt.err) {
					t.Errorf("dead-letter reason = %v; want %v", reason, tt.err)
				}
			}
			if got := strings.Contains(emf.String(), `"DeadLettered":1`); got != tt.wantMetric {
				t.Errorf("DeadLettered metric flushed = %v; want %v (EMF: %s)", got, tt.wantMetric, emf.String())
			}
		})
	}
}

func TestProcessor_dead_letter_failure_logs_both_errors(t *testing.T) {
	var logs bytes.Buffer
	h := &recorder{results: map[string]error{"a/1": permanent{"bad body"}}}
	p := newProcessor(t, h, sqsbatch.HandlerConfig{
		DeadLetter: &deadLetters{err: errors.New("sqs down")},
		Logger:     slog.New(slog.NewJSONHandler(&logs, nil)),
	})
	handle(t, p, t.Context(), fifo("a/1"))
	rec := findLog(t, &logs, "message failed permanently and dead-lettering failed, reported for redelivery")
	reason := fmt.Sprint(rec["reason"])
	if !strings.Contains(reason, "bad body") || !strings.Contains(reason, "sqs down") {
		t.Errorf("reason = %q; want both errors", reason)
	}
}

func TestProcessor_standard_queue_messages_are_independent(t *testing.T) {
	h := &recorder{results: map[string]error{"1": errors.New("boom"), "3": errors.New("boom")}}
	resp := handle(t, newProcessor(t, h, sqsbatch.HandlerConfig{}), t.Context(), standard("1", "2", "3", "4"))
	if got, want := failures(resp), []string{"1", "3"}; !slices.Equal(got, want) {
		t.Errorf("failures = %v; want %v", got, want)
	}
	if got := h.called(); len(got) != 4 {
		t.Errorf("handler called for %v; want all four", got)
	}
}

func TestProcessor_logs_skipped_group_with_count(t *testing.T) {
	var logs bytes.Buffer
	h := &recorder{results: map[string]error{"a/1": errors.New("boom")}}
	p := newProcessor(t, h, sqsbatch.HandlerConfig{Logger: slog.New(slog.NewJSONHandler(&logs, nil))})
	handle(t, p, t.Context(), fifo("a/1", "a/2", "a/3"))
	rec := findLog(t, &logs, "rest of message group skipped, reported failed")
	if rec["level"] != "WARN" || rec["count"] != 2.0 || rec["group"] != "a" || rec["messageId"] != "a/1" {
		t.Errorf("skip log = %v; want WARN, count 2, group a, messageId a/1", rec)
	}
}

func TestNew_reports_every_config_problem(t *testing.T) {
	_, err := sqsbatch.New(nil, sqsbatch.HandlerConfig{Concurrency: -1, DeadlineMargin: -time.Second})
	if err == nil {
		t.Fatal("New accepted a nil handler and a negative config")
	}
	for _, want := range []string{"MessageHandler is nil", "Concurrency", "DeadlineMargin"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %s", err, want)
		}
	}
	err = sqsbatch.Config{MaxReceiveCount: batch.BackstopReceives, Options: batch.Options{MaxAttempts: -1}}.Validate()
	for _, want := range []string{"MaxReceiveCount", "MaxAttempts"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %s", err, want)
		}
	}
	if err := (sqsbatch.Config{}).Validate(); err != nil {
		t.Errorf("zero Config: %v; want valid", err)
	}
}

// findLog returns the first JSON log record with message msg.
func findLog(t *testing.T, logs *bytes.Buffer, msg string) map[string]any {
	t.Helper()
	for line := range strings.Lines(logs.String()) {
		var rec map[string]any
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatalf("log line %q: %v", line, err)
		}
		if rec["msg"] == msg {
			return rec
		}
	}
	t.Fatalf("no log %q in:\n%s", msg, logs.String())
	return nil
}
