package publish_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"

	"github.com/onceflow/onceflow/pkg/cloudevent"
	"github.com/onceflow/onceflow/pkg/publish"
	"github.com/onceflow/onceflow/pkg/testkit"
)

func events(t *testing.T, n int, groups ...string) []cloudevent.Event {
	t.Helper()
	evs := make([]cloudevent.Event, n)
	for i := range evs {
		g := groups[i%len(groups)]
		ev, err := cloudevent.New(fmt.Sprintf("ev-%s-%02d", g, i), "test", "test.happened", g, time.Unix(0, 0), map[string]int{"n": i})
		if err != nil {
			t.Fatal(err)
		}
		evs[i] = ev
	}
	return evs
}

func TestPublisher_resending_the_same_events_delivers_each_once_in_group_order(t *testing.T) {
	t.Parallel()
	client := testkit.SQS(t)
	url := testkit.CreateFIFOQueue(t, client, "publish")
	p, err := publish.New(client, publish.Config{})
	if err != nil {
		t.Fatal(err)
	}
	evs := events(t, 23, "g1", "g2") // three batches
	for range 2 {
		if err := p.Publish(context.Background(), url, evs...); err != nil {
			t.Fatal(err)
		}
	}
	if err := p.Send(context.Background(), url, must(publish.MessageFor(evs[0]))); err != nil {
		t.Fatal(err)
	}
	byGroup := map[string][]string{}
	for _, m := range testkit.Drain(t, client, url) {
		ev, err := cloudevent.Decode([]byte(aws.ToString(m.Body)))
		if err != nil {
			t.Fatal(err)
		}
		byGroup[ev.Subject] = append(byGroup[ev.Subject], ev.ID)
	}
	for _, g := range []string{"g1", "g2"} {
		var want []string
		for _, ev := range evs {
			if ev.Subject == g {
				want = append(want, ev.ID)
			}
		}
		if !slices.Equal(byGroup[g], want) {
			t.Fatalf("group %s received %v; want each event once, in order: %v", g, byGroup[g], want)
		}
	}
}

func TestPublisher_reports_every_message_of_a_failed_send(t *testing.T) {
	t.Parallel()
	client := testkit.SQS(t)
	p, err := publish.New(client, publish.Config{Attempts: 2, Backoff: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	msgs := make([]publish.Message, 12)
	for i, ev := range events(t, 12, "g") {
		msgs[i] = must(publish.MessageFor(ev))
	}
	errs := p.SendBatch(context.Background(), testkit.CreateFIFOQueue(t, client, "publish")+"-missing", msgs)
	for i, err := range errs {
		if err == nil {
			t.Fatalf("message %d reported sent to a missing queue", i)
		}
	}
}

func TestMessageFor_requires_id_and_subject(t *testing.T) {
	for _, ev := range []cloudevent.Event{{Type: "t", Subject: "s"}, {Type: "t", ID: "i"}} {
		if _, err := publish.MessageFor(ev); err == nil {
			t.Fatalf("MessageFor(%+v) = nil error; want one", ev)
		}
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}
