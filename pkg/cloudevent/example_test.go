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
	ev, _ := cloudevent.New("order-placed-o1", "shop/api", "order.placed", "o1", at,
		map[string]any{"orderId": "o1", "total": 42})
	body, _ := cloudevent.Encode(ev)

	got, err := cloudevent.Decode(body)
	fmt.Println(got.ID, got.Type, got.Subject, err)

	_, err = cloudevent.Decode([]byte(`{"specversion":"1.0","source":"s","type":"order.placed"}`))
	var me *cloudevent.MalformedError
	fmt.Println(errors.As(err, &me), me.Field, errors.Is(err, cloudevent.ErrMalformed))
	// Output:
	// order-placed-o1 order.placed o1 <nil>
	// true id true
}

type order struct {
	OrderID string `json:"orderId"`
	Total   int    `json:"total"`
}

// Validate is run by DecodeData: a failure is a malformed event.
func (o order) Validate() error {
	if o.Total <= 0 {
		return cloudevent.Malformed("data.total", "is %d; want a positive amount", o.Total)
	}
	return nil
}

// DecodeData decodes an event's data into a typed value and runs its Validate method; every
// failure names the field. A field the type does not know (one a later version of the producer
// added) is ignored; a member twice in one object is malformed.
func ExampleDecodeData() {
	ev, _ := cloudevent.New("order-placed-o2", "shop/api", "order.placed", "o2", time.Now(), map[string]any{"orderId": "o2", "total": 0})
	var o order
	err := cloudevent.DecodeData(ev, &o)
	fmt.Println(err)

	ev.Data = []byte(`{"orderId":"o2","total":5,"coupon":"X"}`)
	fmt.Println(cloudevent.DecodeData(ev, &o), o.Total)

	ev.Data = []byte(`{"orderId":"o2","total":5,"total":50}`)
	fmt.Println(cloudevent.DecodeData(ev, &o))
	// Output:
	// malformed message: data.total: is 0; want a positive amount
	// <nil> 5
	// malformed message: data.total: appears twice in its object; a member name must be unique
}
