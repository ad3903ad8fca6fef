package cloudevent_test

import (
	"errors"
	"fmt"
	"time"

	"github.com/onceflow/onceflow/pkg/cloudevent"
)

// A publisher builds the event with its stable id; a consumer decodes it, and a message
// without an id is malformed with an error that names the field.
func ExampleDecode() {
	at := time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC)
	ev, _ := cloudevent.New("note-created-n1", "onceflow/api", "note.created", "n1", at,
		map[string]string{"noteId": "n1", "title": "hello #world"})
	body, _ := cloudevent.Encode(ev)

	got, err := cloudevent.Decode(body)
	fmt.Println(got.ID, got.Type, got.Subject, err)

	_, err = cloudevent.Decode([]byte(`{"specversion":"1.0","source":"s","type":"note.created"}`))
	var me *cloudevent.MalformedError
	fmt.Println(errors.As(err, &me), me.Field, errors.Is(err, cloudevent.ErrMalformed))
	// Output:
	// note-created-n1 note.created n1 <nil>
	// true id true
}
