package sqsbatch

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/onceflow/onceflow/pkg/batch"
	"github.com/onceflow/onceflow/pkg/claimcheck"
	"github.com/onceflow/onceflow/pkg/metrics"
	"github.com/onceflow/onceflow/pkg/port"
)

// MessageHandler processes one SQS message. It is called concurrently for messages of
// different groups (of a standard queue: for any two messages), never concurrently for two
// messages of one FIFO group. A nil error acknowledges the message. An error marked
// idempotency.Permanent means the message can never succeed: it is dead-lettered. Any other
// error fails the message so SQS redelivers it. HandleMessage should return when ctx is done.
type MessageHandler interface {
	HandleMessage(ctx context.Context, msg events.SQSMessage) error
}

// MessageHandlerFunc adapts a function to MessageHandler.
type MessageHandlerFunc func(ctx context.Context, msg events.SQSMessage) error

// HandleMessage calls f.
func (f MessageHandlerFunc) HandleMessage(ctx context.Context, msg events.SQSMessage) error {
	return f(ctx, msg)
}

// Config tunes a Processor on an engine (NewFor, NewConsumer), which logs and counts with the
// engine's Logger and Metrics. The zero value works.
type Config struct {
	// Options are the settings every port shares (batch.Options): Concurrency, DeadlineMargin,
	// DeadLetter, MaxAttempts, NoPacking. Of a FIFO queue, Concurrency counts message groups
	// (of a standard queue, messages); a DeadLetter of nil reports a message failed, for the
	// queue's redrive policy to move after maxReceiveCount receives.
	batch.Options
	// MaxReceiveCount is the source queue's redrive policy maxReceiveCount: after it SQS moves
	// a message to the queue's dead-letter queue by itself (crashes, timeouts, out of memory:
	// failures the engine cannot count). 0, the default, when unknown or when the queue has
	// no redrive policy. When set, a Processor built by NewFor on a consumer that holds groups
	// (idempotency.HoldGroup) writes the hold of a message's group naming it before handling
	// it on its last batch.BackstopReceives receives, so that a message the queue moves leaves its
	// group held too; the message's own commit releases the hold. On those receives only, it
	// costs the hold's write and a second transaction (the first finds the group held). Set
	// it from the same value as the queue's (a template test can check).
	MaxReceiveCount int
	// Decoder turns each message into its event; default envelope.CloudEvents. A decoder
	// with a Validate method is validated by Validate.
	Decoder Decoder
	// Payloads, when set, reads the payload of a message whose body points to it (a claim
	// check: a *claimcheck.Reader) before NewFor's decoding. A permanent error of it (the
	// object is missing, or past its bound) dead-letters the message with that reason; any
	// other is retried. The idempotency record keeps the message as received (the pointer) and
	// the hash of the payload. Nil: every body is the payload.
	Payloads claimcheck.PayloadReader
}

func (c Config) withDefaults() Config {
	if c.Concurrency == 0 {
		c.Concurrency = batch.DefaultConcurrency
	}
	if c.DeadlineMargin == 0 {
		c.DeadlineMargin = batch.DefaultDeadlineMargin
	}
	if c.MaxAttempts == 0 {
		c.MaxAttempts = port.DefaultMaxAttempts
	}
	return c
}

// HandlerConfig tunes a Processor of a plain MessageHandler (New): a handler's errors decide
// alone (permanent: dead-lettered; else redelivered by SQS), so it takes only the settings
// that it has use for, and where its decisions are logged and counted. The zero value works.
type HandlerConfig struct {
	Concurrency    int           // as Config.Concurrency; default 8
	DeadlineMargin time.Duration // as Config.DeadlineMargin; default 2s
	// DeadLetter receives the messages the handler refused permanently, which are then
	// acknowledged; nil: they are reported failed, for the queue's redrive policy.
	DeadLetter batch.DeadLetterer
	Logger     *slog.Logger     // where decisions are logged; default slog.Default()
	Metrics    metrics.Recorder // counts metrics.DeadLettered, flushed after every Handle; default metrics.Discard
}

// Validate reports every problem of c, joined. Zero fields are valid: they take defaults.
func (c HandlerConfig) Validate() error {
	return Config{Options: batch.Options{Concurrency: c.Concurrency, DeadlineMargin: c.DeadlineMargin}}.Validate()
}

// settings are what every Processor runs with (batch.New applies the defaults of zero ones).
type settings struct {
	concurrency int
	margin      time.Duration
	deadLetter  batch.DeadLetterer
	logger      *slog.Logger
	metrics     metrics.Recorder
}

func (c HandlerConfig) settings() settings {
	return settings{concurrency: c.Concurrency, margin: c.DeadlineMargin, deadLetter: c.DeadLetter, logger: c.Logger, metrics: c.Metrics}
}

// Validate reports every problem of c, joined. Zero fields are valid: they take defaults.
func (c Config) Validate() error {
	var errs []error
	if c.Concurrency < 0 {
		errs = append(errs, fmt.Errorf("sqsbatch config: Concurrency is %d; want 1 or more (0 means %d)",
			c.Concurrency, batch.DefaultConcurrency))
	}
	if c.DeadlineMargin < 0 {
		errs = append(errs, fmt.Errorf("sqsbatch config: DeadlineMargin is %s; want a positive duration (0 means %s)",
			c.DeadlineMargin, batch.DefaultDeadlineMargin))
	}
	if c.MaxAttempts < 0 {
		errs = append(errs, fmt.Errorf("sqsbatch config: MaxAttempts is %d; want 1 or more (0 means %d)",
			c.MaxAttempts, port.DefaultMaxAttempts))
	}
	if c.MaxReceiveCount < 0 || c.MaxReceiveCount > 0 && c.MaxReceiveCount <= batch.BackstopReceives {
		errs = append(errs, fmt.Errorf("sqsbatch config: MaxReceiveCount is %d; want the queue's maxReceiveCount, above %d (the backstop would hold every group on every receive), or 0 when it has none",
			c.MaxReceiveCount, batch.BackstopReceives))
	}
	if v, ok := c.Decoder.(interface{ Validate() error }); ok {
		if err := v.Validate(); err != nil {
			errs = append(errs, fmt.Errorf("sqsbatch config: Decoder: %w", err))
		}
	}
	return errors.Join(errs...)
}
