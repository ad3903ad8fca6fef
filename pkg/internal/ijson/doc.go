// Package ijson checks that a JSON text is what RFC 7493 (I-JSON) asks of a message: valid
// UTF-8, no member name twice in one object, and no escaped lone UTF-16 surrogate. Go's
// encoding/json accepts all three: it decodes an invalid byte or a lone surrogate as U+FFFD
// and keeps the last of two members, so that two different texts decode to one value. The
// engine's decoders (pkg/cloudevent, pkg/envelope) refuse such a text as malformed instead.
package ijson
