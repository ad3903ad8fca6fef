package notes

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// MaxTags is the most tags a note gets; later hashtags are ignored.
const MaxTags = 20

// MaxTagLength bounds a tag in characters; a longer hashtag is not a tag.
const MaxTagLength = 64

// Tags returns the distinct #hashtags of the title, then the content, lower-cased, in order of
// first appearance, at most MaxTags. A hashtag is '#' followed by letters, digits and
// underscores, with at least one letter or underscore, not directly preceded by a letter,
// digit, underscore or '#' (so "a#b", "##b" and "#1" are not tags). The same text always gives
// the same tags.
func Tags(title, content string) []string {
	tags := []string{}
	seen := map[string]bool{}
	for _, text := range []string{title, content} {
		for _, tag := range hashtags(text) {
			if seen[tag] {
				continue
			}
			if len(tags) == MaxTags {
				return tags
			}
			seen[tag] = true
			tags = append(tags, tag)
		}
	}
	return tags
}

func hashtags(text string) []string {
	var out []string
	prev := ' '
	for i := 0; i < len(text); {
		r, size := utf8.DecodeRuneInString(text[i:])
		if r != '#' || isTagRune(prev) || prev == '#' {
			prev = r
			i += size
			continue
		}
		end := i + size
		for end < len(text) {
			r2, s2 := utf8.DecodeRuneInString(text[end:])
			if !isTagRune(r2) {
				break
			}
			end += s2
		}
		if word := text[i+size : end]; validTag(word) {
			out = append(out, strings.ToLower(word))
		}
		prev = '#'
		if end > i+size {
			prev, _ = utf8.DecodeLastRuneInString(text[:end])
		}
		i = end
	}
	return out
}

func isTagRune(r rune) bool { return r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r) }

func validTag(word string) bool {
	if word == "" || utf8.RuneCountInString(word) > MaxTagLength {
		return false
	}
	return strings.ContainsFunc(word, func(r rune) bool { return r == '_' || unicode.IsLetter(r) })
}
