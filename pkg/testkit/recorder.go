package testkit

import (
	"context"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/onceflow/onceflow/pkg/batch"
	"github.com/onceflow/onceflow/pkg/idempotency"
	"github.com/onceflow/onceflow/pkg/metrics"
)

// DeadLetter is a message the consumer dead-lettered, with the reason. A stream record is
// dead-lettered as its port shapes it (dynamodbbatch.Message, kinesisbatch.Message).
type DeadLetter struct {
	Message events.SQSMessage
	Reason  error
}

// recorder is what every test-kit consumer records of its engine: what it counted and what it
// dead-lettered. It is safe for concurrent use.
type recorder struct {
	mu    sync.Mutex
	count map[string]float64
	dead  []DeadLetter
}

// newRecorder sets what consumer and dl leave zero for a test (NewConsumer says what) and
// returns the recorder that consumer.Metrics and, when it was nil, *dl record into.
func newRecorder(tb testing.TB, db *dynamodb.Client, consumer *idempotency.Config, dl *batch.DeadLetterer) *recorder {
	tb.Helper()
	r := &recorder{count: map[string]float64{}}
	if consumer.Name == "" {
		consumer.Name = "test"
	}
	if consumer.Table == "" {
		consumer.Table = IdempotencyTable(tb, db)
	}
	if consumer.CacheSize == 0 {
		consumer.CacheSize = -1
	}
	if consumer.Logger == nil {
		consumer.Logger = slog.New(slog.NewTextHandler(tb.Output(), nil))
	}
	if *dl == nil {
		*dl = batch.DeadLettererFunc(r.deadLetter)
	}
	consumer.Metrics = tee{r, consumer.Metrics}
	return r
}

func (r *recorder) deadLetter(_ context.Context, m events.SQSMessage, reason error) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.dead = append(r.dead, DeadLetter{Message: m, Reason: reason})
	return nil
}

// total is what was counted under a metrics name.
func (r *recorder) total(name string) float64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.count[name]
}

// deadLetters is what was dead-lettered so far.
func (r *recorder) deadLetters() []DeadLetter {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]DeadLetter(nil), r.dead...)
}

func (r *recorder) add(name string, n float64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.count[name] += n
}

// tee counts into the recorder and passes everything on to the user's recorder.
type tee struct {
	r    *recorder
	next metrics.Recorder
}

func (t tee) Count(name string, n float64) {
	t.r.add(name, n)
	if t.next != nil {
		t.next.Count(name, n)
	}
}

func (t tee) Observe(name string, d time.Duration) {
	if t.next != nil {
		t.next.Observe(name, d)
	}
}

// Flush flushes the user's recorder when it buffers.
func (t tee) Flush() error {
	if t.next == nil {
		return nil
	}
	return metrics.Flush(t.next)
}
