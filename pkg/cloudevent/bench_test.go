package cloudevent_test

import (
	"testing"

	"github.com/onceflow/onceflow/pkg/cloudevent"
)

// BenchmarkPayloadHash measures the payload hash (canonical JSON, RFC 8785) of a typical
// event's data.
func BenchmarkPayloadHash(b *testing.B) {
	ev := cloudevent.Event{ID: "mv-1", Type: "account.credited", Source: "api", Subject: "acc-1",
		Data: []byte(`{"accountId":"acc-1","amount":1250,"currency":"EUR","reference":"inv-2026-0042","note":"Orléans","lines":[{"sku":"a","qty":2,"price":10.5},{"sku":"b","qty":1,"price":3}]}`)}
	for b.Loop() {
		_ = ev.PayloadHash()
	}
}

// BenchmarkDecode measures decoding a typical event's body, its I-JSON check included.
func BenchmarkDecode(b *testing.B) {
	body := []byte(`{"specversion":"1.0","id":"mv-1","source":"api","type":"account.credited","subject":"acc-1",` +
		`"time":"2026-11-30T10:00:00Z","datacontenttype":"application/json","traceparent":"00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",` +
		`"data":{"accountId":"acc-1","amount":1250,"currency":"EUR","reference":"inv-2026-0042","note":"Orléans","lines":[{"sku":"a","qty":2,"price":10.5},{"sku":"b","qty":1,"price":3}]}}`)
	for b.Loop() {
		if _, err := cloudevent.Decode(body); err != nil {
			b.Fatal(err)
		}
	}
}
