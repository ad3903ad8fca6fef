package idempotency_test

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/onceflow/onceflow/internal/webhooktest"
	"github.com/onceflow/onceflow/pkg/cloudevent"
	"github.com/onceflow/onceflow/pkg/idempotency"
	"github.com/onceflow/onceflow/pkg/lease"
)

// receiver is a webhook receiver on loopback that answers 204, as a downstream service that
// applies each Idempotency-Key's effect once on its first successful call.
type receiver struct{ *webhooktest.Receiver }

func newReceiver(t *testing.T) *receiver {
	w := webhooktest.Start(t)
	w.Answer(http.StatusNoContent)
	return &receiver{w}
}

// Applied returns how many distinct keys had their effect applied: were answered a success.
func (r *receiver) Applied() int {
	applied := map[string]bool{}
	for _, c := range r.Calls() {
		if c.Status/100 == 2 {
			applied[c.Key()] = true
		}
	}
	return len(applied)
}

// failNext makes the receiver answer 500 to the next n calls, and 204 after.
func (r *receiver) failNext(n int) {
	var calls atomic.Int64
	r.Respond(func(webhooktest.Call) int {
		if calls.Add(1) <= int64(n) {
			return http.StatusInternalServerError
		}
		return http.StatusNoContent
	})
}

// call POSTs the event id to the receiver with key as its Idempotency-Key, signed as the
// receiver requires (HMAC-SHA256 with its secret over timestamp + "." + key + "." + body).
func (r *receiver) call(ctx context.Context, ev cloudevent.Event, key string) error {
	body := `{"id":"` + ev.ID + `"}`
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, r.URL, strings.NewReader(body))
	if err != nil {
		return err
	}
	ts := strconv.FormatInt(time.Now().Unix(), 10)
	mac := hmac.New(sha256.New, []byte(r.Secret))
	mac.Write([]byte(ts + "." + key + "." + body))
	req.Header.Set("Webhook-Timestamp", ts)
	req.Header.Set("Webhook-Signature", "v2="+hex.EncodeToString(mac.Sum(nil)))
	req.Header.Set("Idempotency-Key", key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("webhook answered %s", resp.Status)
	}
	return nil
}

// effect is the receiver's call as a SideEffect.
func (r *receiver) effect() lease.SideEffect { return lease.SideEffectFunc(r.call) }

// errProcessDied is what a crashed process's DynamoDB calls return: none of them lands.
var errProcessDied = errors.New("the process died")

// crashingDB passes calls to DynamoDB until die is called, and fails every call after,
// as if the process had died: a record it claimed stays in progress under its lease.
type crashingDB struct {
	idempotency.DB
	dead atomic.Bool
}

func (d *crashingDB) die() { d.dead.Store(true) }

func (d *crashingDB) UpdateItem(ctx context.Context, in *dynamodb.UpdateItemInput, opts ...func(*dynamodb.Options)) (*dynamodb.UpdateItemOutput, error) {
	if d.dead.Load() {
		return nil, errProcessDied
	}
	return d.DB.UpdateItem(ctx, in, opts...)
}

func (d *crashingDB) DeleteItem(ctx context.Context, in *dynamodb.DeleteItemInput, opts ...func(*dynamodb.Options)) (*dynamodb.DeleteItemOutput, error) {
	if d.dead.Load() {
		return nil, errProcessDied
	}
	return d.DB.DeleteItem(ctx, in, opts...)
}

// gate is a side effect that calls the receiver and then waits until it is opened (or its
// context ends): an effect that is still running while the test acts.
type gate struct {
	r       *receiver
	started chan struct{}
	open    chan struct{}
	stopped chan time.Time // when the effect saw its context end
	once    sync.Once
}

func newGate(r *receiver) *gate {
	return &gate{r: r, started: make(chan struct{}), open: make(chan struct{}), stopped: make(chan time.Time, 1)}
}

func (g *gate) Run(ctx context.Context, ev cloudevent.Event, key string) error {
	err := g.r.call(ctx, ev, key)
	g.once.Do(func() { close(g.started) })
	select {
	case <-g.open:
		return err
	case <-ctx.Done():
		select {
		case g.stopped <- time.Now():
		default:
		}
		return errors.Join(err, context.Cause(ctx))
	}
}

// leased returns a lease.Consumer on the fixture's idempotency table, through db (the
// fixture's client when nil).
func (f *fixture) leased(t *testing.T, name string, db idempotency.DB, effect lease.SideEffect, mod ...func(*lease.Config)) *lease.Consumer {
	t.Helper()
	if db == nil {
		db = f.db
	}
	cfg := lease.Config{Config: idempotency.Config{Name: name, Table: f.records, CacheSize: -1,
		Logger: f.logger}}
	for _, m := range mod {
		m(&cfg)
	}
	c, err := lease.New(db, effect, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// runHeld processes msg with c in the background, its effect g, and returns once the effect
// has started; the channel receives what process returned.
func runHeld(c *lease.Consumer, g *gate, msg events.SQSMessage) <-chan error {
	done := make(chan error, 1)
	go func() {
		_, err := process(context.Background(), c, msg)
		done <- err
	}()
	<-g.started
	return done
}
