package shop_test

import (
	"context"
	"io"
	"time"

	"example.com/shop"
	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/onceflow/onceflow/pkg/batch"
	"github.com/onceflow/onceflow/pkg/cloudevent"
	"github.com/onceflow/onceflow/pkg/deadletter"
	"github.com/onceflow/onceflow/pkg/idempotency"
	"github.com/onceflow/onceflow/pkg/lease"
	"github.com/onceflow/onceflow/pkg/metrics"
	"github.com/onceflow/onceflow/pkg/operator"
	"github.com/onceflow/onceflow/pkg/outbox"
	"github.com/onceflow/onceflow/pkg/port"
	"github.com/onceflow/onceflow/pkg/publish"
	"github.com/onceflow/onceflow/pkg/sqsbatch"
	"github.com/onceflow/onceflow/pkg/xray"
)

// The public API as an importer relies on it, pinned at compile time: changing a signature
// below breaks this module's build, and so `make test`. A change that is meant must update
// this file and CHANGELOG.md.
var (
	// cloudevent
	_ func([]byte) (cloudevent.Event, error)                                         = cloudevent.Decode
	_ func(cloudevent.Event) ([]byte, error)                                         = cloudevent.Encode
	_ func(string, string, string, string, time.Time, any) (cloudevent.Event, error) = cloudevent.New
	_ func(cloudevent.Event, any) error                                              = cloudevent.DecodeData
	_ func(string, string, ...any) error                                             = cloudevent.Malformed
	_ func(cloudevent.Event) string                                                  = cloudevent.Event.PayloadHash
	_ error                                                                          = (*cloudevent.MalformedError)(nil)
	_                                                                                = cloudevent.ErrMalformed
	_                                                                                = cloudevent.MaxIDLength

	// idempotency: the consumer, effects, the permanence rule
	_ func(idempotency.DB, idempotency.Handler, idempotency.Config) (*idempotency.Consumer, error)                                  = idempotency.New
	_ func(*idempotency.Consumer, context.Context, cloudevent.Event, port.Delivery) (idempotency.Result, error)                     = (*idempotency.Consumer).Apply
	_ func(*idempotency.Consumer) port.Engine                                                                                       = (*idempotency.Consumer).Engine
	_ idempotency.DB                                                                                                                = (*dynamodb.Client)(nil)
	_ idempotency.Handler                                                                                                           = idempotency.HandlerFunc(nil)
	_ idempotency.Handler                                                                                                           = (*idempotency.Router)(nil)
	_ func(...idempotency.RouteOption) *idempotency.Router                                                                          = idempotency.NewRouter
	_ func() idempotency.RouteOption                                                                                                = idempotency.Strict
	_ func(*idempotency.Router) []string                                                                                            = (*idempotency.Router).Types
	_ func(*idempotency.Router, string, func(cloudevent.Event, shop.Order) (idempotency.Effect, error), ...idempotency.RouteOption) = idempotency.Route[shop.Order]
	_ func(string, any) idempotency.Write                                                                                           = idempotency.Put
	_ func(string, any, expression.UpdateBuilder) idempotency.Write                                                                 = idempotency.Update
	_ func(string, any) idempotency.Write                                                                                           = idempotency.Delete
	_ func(string, any, expression.ConditionBuilder) idempotency.Write                                                              = idempotency.Check
	_ func(types.TransactWriteItem) idempotency.Write                                                                               = idempotency.Raw
	_ func(idempotency.Write, expression.ConditionBuilder) idempotency.Write                                                        = idempotency.Write.If
	_ func(idempotency.Write, string) idempotency.Write                                                                             = idempotency.Write.OrReject
	_ func(idempotency.Write) idempotency.Write                                                                                     = idempotency.Write.OrDuplicate
	_ func(idempotency.Write, ...idempotency.Write) idempotency.Write                                                               = idempotency.Write.OnReject
	_ func(idempotency.Write) (types.TransactWriteItem, error)                                                                      = idempotency.Write.TransactWriteItem
	_ func(idempotency.Effect) ([]types.TransactWriteItem, error)                                                                   = idempotency.Effect.TransactWriteItems
	_ func(error) error                                                                                                             = idempotency.Permanent
	_ func(error) bool                                                                                                              = idempotency.IsPermanent
	_                                                                                                                               = idempotency.Config{Name: "", Table: "", Retention: 0, CacheSize: 0, StorePayload: false, Retry: idempotency.Retry{}, Logger: nil, Metrics: metrics.Recorder(nil), Now: time.Now}
	_                                                                                                                               = port.Delivery{MessageID: "", SequenceNumber: "", ReceiveCount: 0, Body: ""}
	_                                                                                                                               = idempotency.Result{Outcome: idempotency.Applied, Key: "", EventID: "", Reason: "", Stored: idempotency.Duplicate, Commit: 0}
	_                                                                                                                               = []idempotency.Outcome{idempotency.Applied, idempotency.Rejected, idempotency.Duplicate, idempotency.Conflict, idempotency.Malformed, idempotency.Failed, idempotency.Ignored}
	_                                                                                                                               = []error{idempotency.ErrConflict, idempotency.ErrInvalidEffect, idempotency.ErrHeld}

	// lease: the lease mode
	_ func(idempotency.DB, lease.SideEffect, lease.Config) (*lease.Consumer, error)                       = lease.New
	_ func(*lease.Consumer, context.Context, cloudevent.Event, port.Delivery) (idempotency.Result, error) = (*lease.Consumer).Apply
	_ func(*lease.Consumer) port.Engine                                                                   = (*lease.Consumer).Engine
	_ lease.SideEffect                                                                                    = lease.SideEffectFunc(nil)
	_                                                                                                     = lease.Config{Config: idempotency.Config{}, Lease: time.Second, LeaseMargin: 0, Heartbeat: 0, WaitForCompletion: 0}
	_                                                                                                     = []error{lease.ErrHeld, lease.ErrLost}

	// port: the contract a port is written on
	_ func(port.Engine, int, port.Rules) port.Batch                                                = port.Engine.Begin
	_ func(port.Batch, context.Context, cloudevent.Event, port.Delivery) error                     = port.Batch.Apply
	_ func(port.Batch, context.Context, port.Delivery, cloudevent.Event, error) error              = port.Batch.Fail
	_ func(port.Batch, context.Context, string, string, func(context.Context) error) (bool, error) = port.Batch.DeadLetter
	_                                                                                              = port.Rules{MaxAttempts: port.DefaultMaxAttempts, NoPacking: false}
	_                                                                                              = port.Held{EventID: "", MessageID: "", PayloadHash: "", Reason: "", HeldAt: ""}

	// operator: what the engine keeps, and an operator's decisions
	_ func(string, string) string = operator.Key
	_ func(string) []string       = operator.KeyPrefixes

	// sqsbatch
	_ func(sqsbatch.MessageHandler, sqsbatch.HandlerConfig) (*sqsbatch.Processor, error)                          = sqsbatch.New
	_ func(port.Engine, sqsbatch.Config) (*sqsbatch.Processor, error)                                             = sqsbatch.NewFor
	_ func(idempotency.DB, idempotency.Handler, idempotency.Config, sqsbatch.Config) (*sqsbatch.Processor, error) = sqsbatch.NewConsumer
	_ func(events.SQSMessage) port.Delivery                                                                       = sqsbatch.DeliveryOf
	_ func(*sqsbatch.Processor, context.Context, events.SQSEvent) (events.SQSEventResponse, error)                = (*sqsbatch.Processor).Handle
	_ sqsbatch.MessageHandler                                                                                     = sqsbatch.MessageHandlerFunc(nil)
	_ batch.DeadLetterer                                                                                          = (*deadletter.Queue)(nil)
	_                                                                                                             = sqsbatch.Config{Options: batch.Options{Concurrency: 1, DeadlineMargin: 0, DeadLetter: batch.DeadLettererFunc(nil), MaxAttempts: 0, NoPacking: false}, MaxReceiveCount: 0, Decoder: nil, Payloads: nil}
	_                                                                                                             = sqsbatch.HandlerConfig{Concurrency: 1, DeadlineMargin: 0, DeadLetter: batch.DeadLettererFunc(nil), Logger: nil, Metrics: metrics.Discard}

	// deadletter
	_ func(deadletter.SendMessageAPI, string) *deadletter.Queue = deadletter.New
	_ deadletter.SendMessageAPI                                 = (*sqs.Client)(nil)
	_                                                           = []string{deadletter.AttrReason, deadletter.AttrSourceMessageID, deadletter.AttrSourceQueueARN, deadletter.AttrReceiveCount, deadletter.AttrDeadLetteredAt}

	// metrics
	_ func(io.Writer, string, map[string]string) *metrics.EMF = metrics.NewEMF
	_ metrics.Recorder                                        = (*metrics.EMF)(nil)
	_ metrics.Flusher                                         = (*metrics.EMF)(nil)
	_                                                         = metrics.Ignored
	_ metrics.Recorder                                        = countingRecorder{}
	_ func(metrics.Recorder) error                            = metrics.Flush

	// outbox
	_ func(string, cloudevent.Event, time.Time, ...outbox.PutOption) (types.TransactWriteItem, error)  = outbox.Put
	_ func(string) outbox.PutOption                                                                    = outbox.WithTrace
	_ func(cloudevent.Event, time.Time) (outbox.Item, error)                                           = outbox.NewItem
	_ func(string, string) map[string]types.AttributeValue                                             = outbox.Key
	_ func(string) error                                                                               = outbox.CheckText
	_ func(outbox.RelayConfig) (*outbox.Relay, error)                                                  = outbox.NewRelay
	_ func(*outbox.Relay, context.Context, events.DynamoDBEvent) (events.DynamoDBEventResponse, error) = (*outbox.Relay).Handle
	_ func(map[string]events.DynamoDBAttributeValue) map[string]types.AttributeValue                   = outbox.FromStreamImage
	_ outbox.BatchSender                                                                               = (*publish.Publisher)(nil)

	// xray
	_ func(context.Context, string) context.Context = xray.NewContext
	_ func(context.Context) string                  = xray.FromContext
	_ func(string) string                           = xray.TraceID
	_ func(time.Time) string                        = xray.NewHeader
	_                                               = publish.Message{TraceHeader: xray.SQSAttribute + xray.HTTPHeader}

	// publish
	_ func(publish.Sender, publish.Config) (*publish.Publisher, error)             = publish.New
	_ publish.Sender                                                               = (*sqs.Client)(nil)
	_ func(cloudevent.Event) (publish.Message, error)                              = publish.MessageFor
	_ func(*publish.Publisher, context.Context, string, ...cloudevent.Event) error = (*publish.Publisher).Publish
	_ func(*publish.Publisher, context.Context, string, publish.Message) error     = (*publish.Publisher).Send
	_ func(*publish.Publisher, context.Context, string, []publish.Message) []error = (*publish.Publisher).SendBatch
)

// countingRecorder is an importer's own metrics, plugged in through metrics.Recorder.
type countingRecorder struct{}

func (countingRecorder) Count(string, float64)         {}
func (countingRecorder) Observe(string, time.Duration) {}
