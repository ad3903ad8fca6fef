package notify_test

import (
	"context"
	"fmt"
	"time"

	"github.com/onceflow/onceflow/internal/notify"
	"github.com/onceflow/onceflow/internal/webhooktest"
	"github.com/onceflow/onceflow/pkg/cloudevent"
)

// A Notifier is the side effect of a lease.Consumer; here it is called directly.
func Example() {
	hook, err := webhooktest.NewReceiver()
	if err != nil {
		panic(err)
	}
	defer hook.Close()

	n, err := notify.New(notify.Config{URL: hook.URL, Secret: hook.Secret, Timeout: 2 * time.Second})
	if err != nil {
		panic(err)
	}
	ev, _ := cloudevent.New("note-created-1", "onceflow/api", notify.NoteCreated, "1",
		time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC), map[string]string{"noteId": "1", "title": "Hello"})
	fmt.Println(n.Run(context.Background(), ev, "note-notifier#note-created-1"))
	fmt.Println("Idempotency-Key:", hook.Keys())
	// Output:
	// <nil>
	// Idempotency-Key: [1fe7038df117963406ace8b218a34edecdb10c3c0726c2667da88393bba0dcca]
}
