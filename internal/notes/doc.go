// Package notes is the notes domain: creating a note together with its note.created outbox
// event, and the note-tagger's pure decision, which turns a note.created event into the note's
// tag set, one counter per tag and one membership item per tag.
//
// Items in the app table (single-table design, string keys pk and sk; kind names the item):
//
//	note        pk "NOTE#<id>"   sk "NOTE"          id, title, content, createdAt,
//	                                                tags (list) and taggedAt (the event's
//	                                                time), both set by the tagger
//	tag counter pk "TAG#<tag>"   sk "COUNT"         tag, count (notes carrying the tag)
//	membership  pk "TAG#<tag>"   sk "NOTE#<noteId>" tag, noteId
package notes
