package api_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/onceflow/onceflow/internal/api"
)

// The Idempotency-Key window is exact to the second: a retry up to 24 hours after the first
// request, that second included, is answered with the first note; from the second after, the
// key is new and the request creates another note.
func TestAPI_an_Idempotency_Key_is_remembered_for_24_hours_to_the_second(t *testing.T) {
	tests := []struct {
		name       string
		after      time.Duration
		wantStatus int
		sameNote   bool
	}{
		{"one hour on", time.Hour, http.StatusOK, true},
		{"24 hours on, to the second", api.IdempotencyWindow, http.StatusOK, true},
		{"24 hours and one second on", api.IdempotencyWindow + time.Second, http.StatusCreated, false},
		{"eight days on", 8 * 24 * time.Hour, http.StatusCreated, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, c := newClockedFixture(t)
			req := sample(t, "api-create-note.json")
			_, first := f.do(t, req)
			c.advance(tt.after)
			status, again := f.do(t, req)
			if status != tt.wantStatus || (again["id"] == first["id"]) != tt.sameNote {
				t.Fatalf("retry = %d %v; want %d, same note %v (first %v)", status, again, tt.wantStatus, tt.sameNote, first["id"])
			}
			want := 1
			if !tt.sameNote {
				want = 2
			}
			if got := f.kinds(t); got["note"] != want || got["outbox"] != want || got["request"] != 1 {
				t.Fatalf("items by kind = %v; want %d notes, %d outbox events, one request", got, want, want)
			}
		})
	}
}
