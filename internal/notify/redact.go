package notify

import (
	"context"
	"errors"
	"net/url"
	"strings"
)

// redactedError is a transport error with the webhook URL and its host taken out of the text.
// It unwraps to the context's error only, so errors.Is still tells a timeout, and nothing
// down the chain can print the URL.
type redactedError struct {
	msg   string
	cause error // context.DeadlineExceeded, context.Canceled or nil
}

func (e *redactedError) Error() string { return e.msg }
func (e *redactedError) Unwrap() error { return e.cause }

// redact returns err's text without the URL, its host or its path.
func (n *Notifier) redact(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err // "Post <url>: <err>" quotes the URL
	}
	msg := err.Error()
	if u, perr := url.Parse(n.url); perr == nil {
		for _, s := range []string{n.url, u.Host, u.Hostname(), u.EscapedPath(), u.RawQuery} {
			if s != "" && s != "/" {
				msg = strings.ReplaceAll(msg, s, "<webhook>")
			}
		}
	}
	var cause error
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		cause = context.DeadlineExceeded
	case errors.Is(err, context.Canceled):
		cause = context.Canceled
	}
	return &redactedError{msg: "webhook call: " + msg, cause: cause}
}
