package api_test

import (
	"net/http"
	"testing"

	"github.com/onceflow/onceflow/internal/notes"
	"github.com/onceflow/onceflow/pkg/cloudevent"
)

// A client polling a note it created learns whether the note-tagger has run: "tagging" is
// "pending" until then (tags [] may mean either), "done" after.
func TestAPI_a_note_says_whether_its_tagging_is_pending_or_done(t *testing.T) {
	f := newFixture(t)
	status, created := f.do(t, sample(t, "api-create-note.json"))
	if status != http.StatusCreated || created["tagging"] != "pending" {
		t.Fatalf("create = %d %v; want 201 with tagging pending", status, created)
	}
	id := created["id"].(string)
	path := "/notes/" + id
	if status, got := f.getPath(t, path); status != http.StatusOK || got["tagging"] != "pending" {
		t.Fatalf("GET %s before tagging = %d %v; want tagging pending", path, status, got)
	}
	ev, err := cloudevent.New(notes.CreatedEventID(id), notes.Source, notes.Created, id, now,
		notes.CreatedData{NoteID: id, Title: created["title"].(string), Content: created["content"].(string)})
	if err != nil {
		t.Fatal(err)
	}
	eff, err := notes.TagEffect(f.table, ev, notes.CreatedData{NoteID: id, Title: created["title"].(string), Content: created["content"].(string)})
	if err != nil {
		t.Fatal(err)
	}
	f.commit(t, eff)
	if status, got := f.getPath(t, path); status != http.StatusOK || got["tagging"] != "done" || len(got["tags"].([]any)) != 2 {
		t.Fatalf("GET %s after tagging = %d %v; want tagging done with two tags", path, status, got)
	}
}
