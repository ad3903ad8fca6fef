package localcloud

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httputil"
	"net/url"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/onceflow/onceflow/pkg/xray"
)

// sqsTraces stands in front of fauxqs and keeps what fauxqs drops: the AWSTraceHeader message
// system attribute. fauxqs (1.9.2 as pinned; its source as of 2.9.2 too) accepts
// SendMessage's and SendMessageBatch's MessageSystemAttributes and stores nothing of them, so a
// relay's trace would never reach a consumer. The proxy passes every request through unchanged,
// notes the AWSTraceHeader each sent message carried under the message id fauxqs answers with,
// and adds it to that message's Attributes in ReceiveMessage answers that ask for All or
// AWSTraceHeader system attributes, as SQS does. A re-send that fauxqs deduplicates answers
// the first message's id, whose first trace is kept, as SQS keeps the first message. The notes
// live as long as the local cloud, in memory.
//
// A message is visible to a waiting receive as soon as fauxqs stores it, before the proxy has
// the send's answer and its message id; so a receive answer holding a message the proxy does
// not know waits (a second at most) for the sends that were under way when it came.
type sqsTraces struct {
	proxy   *httputil.ReverseProxy
	mu      sync.Mutex
	traces  map[string]string        // AWSTraceHeader by message id
	sending map[uint64]chan struct{} // sends under way, closed when their answer is noted
	next    uint64
}

// newSQSTraces returns the proxy to the SQS endpoint target; onError hears of requests it could
// not pass on, except those whose caller had gone (a poller's long poll when the cloud stops).
func newSQSTraces(target string, onError func(msg string, args ...any)) (*sqsTraces, error) {
	u, err := url.Parse(target)
	if err != nil {
		return nil, err
	}
	s := &sqsTraces{traces: map[string]string{}, sending: map[uint64]chan struct{}{}}
	s.proxy = &httputil.ReverseProxy{
		// The Host stays the proxy's: fauxqs names queue URLs after it, so they lead here too.
		Rewrite: func(r *httputil.ProxyRequest) { r.SetURL(u); r.Out.Host = r.In.Host },
		ErrorHandler: func(w http.ResponseWriter, r *http.Request, err error) {
			if r.Context().Err() == nil {
				onError("sqs proxy", "target", r.Header.Get("X-Amz-Target"), "err", err)
			}
			w.WriteHeader(http.StatusBadGateway)
		},
	}
	return s, nil
}

// sysAttrs is a request's MessageSystemAttributes.
type sysAttrs map[string]struct{ StringValue string }

func (s *sqsTraces) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	var req struct {
		MessageSystemAttributes sysAttrs
		Entries                 []struct {
			ID                      string `json:"Id"`
			MessageSystemAttributes sysAttrs
		}
		AttributeNames              []string
		MessageSystemAttributeNames []string
	}
	target := r.Header.Get("X-Amz-Target")
	if json.Unmarshal(body, &req) != nil {
		s.proxy.ServeHTTP(w, r)
		return
	}
	proxy := *s.proxy
	if target == "AmazonSQS.SendMessage" || target == "AmazonSQS.SendMessageBatch" {
		defer s.sent(s.sendStarts())
	}
	switch target {
	case "AmazonSQS.SendMessage":
		h := req.MessageSystemAttributes[xray.SQSAttribute].StringValue
		proxy.ModifyResponse = s.edit(func(out map[string]json.RawMessage) bool {
			s.note(str(out["MessageId"]), h)
			return false
		})
	case "AmazonSQS.SendMessageBatch":
		byEntry := map[string]string{}
		for _, e := range req.Entries {
			byEntry[e.ID] = e.MessageSystemAttributes[xray.SQSAttribute].StringValue
		}
		proxy.ModifyResponse = s.edit(func(out map[string]json.RawMessage) bool {
			var ok []struct {
				ID        string `json:"Id"`
				MessageID string `json:"MessageId"`
			}
			_ = json.Unmarshal(out["Successful"], &ok)
			for _, e := range ok {
				s.note(e.MessageID, byEntry[e.ID])
			}
			return false
		})
	case "AmazonSQS.ReceiveMessage":
		names := slices.Concat(req.AttributeNames, req.MessageSystemAttributeNames)
		if slices.Contains(names, "All") || slices.Contains(names, xray.SQSAttribute) {
			proxy.ModifyResponse = s.edit(s.addTraces)
		}
	}
	proxy.ServeHTTP(w, r)
}

// note keeps the trace header a message was sent with, "" for none: every sent message is
// known, so a receive waits for sends only in the race above.
func (s *sqsTraces) note(messageID, header string) {
	if messageID == "" {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, seen := s.traces[messageID]; !seen {
		s.traces[messageID] = header
	}
}

// sendStarts registers a send under way and returns its ticket.
func (s *sqsTraces) sendStarts() uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.next++
	s.sending[s.next] = make(chan struct{})
	return s.next
}

// sent ends the send of ticket: its answer, if any, is noted.
func (s *sqsTraces) sent(ticket uint64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	close(s.sending[ticket])
	delete(s.sending, ticket)
}

// awaitSends waits for the sends under way now, a second at most, when one of msgs is unknown.
func (s *sqsTraces) awaitSends(msgs []map[string]json.RawMessage) {
	s.mu.Lock()
	unknown := false
	for _, m := range msgs {
		_, seen := s.traces[str(m["MessageId"])]
		unknown = unknown || !seen
	}
	var under []chan struct{}
	if unknown {
		for _, ch := range s.sending {
			under = append(under, ch)
		}
	}
	s.mu.Unlock()
	timeout := time.After(time.Second)
	for _, ch := range under {
		select {
		case <-ch:
		case <-timeout:
			return
		}
	}
}

// addTraces adds their AWSTraceHeader to the received messages that were sent with one.
func (s *sqsTraces) addTraces(out map[string]json.RawMessage) bool {
	var msgs []map[string]json.RawMessage
	if json.Unmarshal(out["Messages"], &msgs) != nil || len(msgs) == 0 {
		return false
	}
	s.awaitSends(msgs)
	changed := false
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, m := range msgs {
		h := s.traces[str(m["MessageId"])]
		if h == "" {
			continue
		}
		attrs := map[string]string{}
		_ = json.Unmarshal(m["Attributes"], &attrs)
		attrs[xray.SQSAttribute] = h
		m["Attributes"], _ = json.Marshal(attrs)
		changed = true
	}
	if changed {
		out["Messages"], _ = json.Marshal(msgs)
	}
	return changed
}

// edit returns a ModifyResponse that hands a successful JSON answer to f and, when f reports
// a change, writes the changed answer back.
func (s *sqsTraces) edit(f func(out map[string]json.RawMessage) bool) func(*http.Response) error {
	return func(resp *http.Response) error {
		if resp.StatusCode != http.StatusOK {
			return nil
		}
		body, err := io.ReadAll(resp.Body)
		_ = resp.Body.Close()
		if err != nil {
			return err
		}
		var out map[string]json.RawMessage
		if json.Unmarshal(body, &out) == nil && f(out) {
			if b, err := json.Marshal(out); err == nil {
				body = b
			}
		}
		resp.Body = io.NopCloser(bytes.NewReader(body))
		resp.ContentLength = int64(len(body))
		resp.Header.Set("Content-Length", strconv.Itoa(len(body)))
		return nil
	}
}

func str(raw json.RawMessage) string {
	var s string
	_ = json.Unmarshal(raw, &s)
	return s
}
