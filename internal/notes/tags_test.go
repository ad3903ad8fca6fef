package notes_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/onceflow/onceflow/internal/notes"
)

func TestTags_are_distinct_lower_cased_hashtags_in_order_of_first_appearance(t *testing.T) {
	many := make([]string, 25)
	for i := range many {
		many[i] = fmt.Sprintf("#t%02d", i)
	}
	tests := []struct {
		name           string
		title, content string
		want           []string
	}{
		{"no hashtags", "Shopping", "milk, bread", []string{}},
		{"title before content", "Trip #Lisbon", "pack #travel gear", []string{"lisbon", "travel"}},
		{"duplicates differing in case count once", "#Go #go", "#GO and #golang", []string{"go", "golang"}},
		{"first appearance decides the order", "#b", "#a #b #c #a", []string{"b", "a", "c"}},
		{"punctuation ends a tag", "#food: bread, #coffee!", "(#tea)", []string{"food", "coffee", "tea"}},
		{"underscores and digits belong to the tag", "#go_1_26 #v2", "", []string{"go_1_26", "v2"}},
		{"a hash inside a word is not a tag", "issue#12 a#b", "", []string{}},
		{"a doubled hash is not a tag", "##twice", "", []string{}},
		{"digits only is not a tag", "#2026 #1", "", []string{}},
		{"a lone hash is not a tag", "# heading", "#", []string{}},
		{"letters of any script", "#Café #ÜBER", "#日本", []string{"café", "über", "日本"}},
		{"at most twenty", strings.Join(many, " "), "", []string{
			"t00", "t01", "t02", "t03", "t04", "t05", "t06", "t07", "t08", "t09",
			"t10", "t11", "t12", "t13", "t14", "t15", "t16", "t17", "t18", "t19"}},
		{"a tag longer than the limit is ignored", "#" + strings.Repeat("x", notes.MaxTagLength+1) + " #ok", "", []string{"ok"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := notes.Tags(tt.title, tt.content)
			if !slices.Equal(got, tt.want) {
				t.Fatalf("Tags(%q, %q) = %q; want %q", tt.title, tt.content, got, tt.want)
			}
		})
	}
}

func TestTags_same_note_gives_same_tags(t *testing.T) {
	title, content := "Plan #Q4 #roadmap", "#Roadmap review, #budget, #q4 #hiring"
	first := notes.Tags(title, content)
	for range 100 {
		if got := notes.Tags(title, content); !slices.Equal(got, first) {
			t.Fatalf("Tags changed between calls: %q then %q", first, got)
		}
	}
}

func ExampleTags() {
	fmt.Println(notes.Tags("Trip to #Lisbon", "Pack #travel adapters, #LISBON maps"))
	// Output: [lisbon travel]
}
