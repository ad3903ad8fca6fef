package gatekeeper

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"
)

// tokenLife is how long a Kinesis shard iterator is valid: past it AWS refuses the iterator,
// and the gatekeeper forgets it.
const tokenLife = 5 * time.Minute

// tokens remembers the stream each Kinesis shard iterator and ListShards token belongs to:
// kinesalite's (like AWS's) are opaque, and a GetRecords names nothing else. It is safe for
// concurrent use.
type tokens struct {
	mu    sync.Mutex
	byTok map[string]token
	swept time.Time
}

type token struct {
	stream string
	at     time.Time
}

func (t *tokens) put(tok, stream string) {
	if tok == "" || stream == "" || stream == "*" {
		return
	}
	now := time.Now()
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.byTok == nil {
		t.byTok = map[string]token{}
	}
	t.byTok[tok] = token{stream: stream, at: now}
	if now.Sub(t.swept) > time.Minute {
		for k, v := range t.byTok {
			if now.Sub(v.at) > tokenLife {
				delete(t.byTok, k)
			}
		}
		t.swept = now
	}
}

func (t *tokens) stream(tok string) string {
	t.mu.Lock()
	defer t.mu.Unlock()
	if v, ok := t.byTok[tok]; ok && time.Since(v.at) <= tokenLife {
		return v.stream
	}
	return "*"
}

// observe reads an emulator's answer before the caller does: it notes the Kinesis iterators and
// tokens handed out, and answers a missing object 403 to a caller who may not list its bucket.
func (g *Gatekeeper) observe(resp *http.Response) error {
	r := resp.Request
	if m, ok := r.Context().Value(listRightKey{}).(*missingObject); ok && resp.StatusCode == http.StatusNotFound {
		return g.hideMissing(resp, m)
	}
	t := r.Header.Get("X-Amz-Target")
	if !strings.HasPrefix(t, "Kinesis") || resp.StatusCode != http.StatusOK {
		return nil
	}
	op := target(r)
	if op != "GetShardIterator" && op != "GetRecords" && op != "ListShards" {
		return nil
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		return err
	}
	resp.Body = io.NopCloser(bytes.NewReader(body))
	var in kinesisRequest
	if req, ok := r.Context().Value(requestBodyKey{}).([]byte); ok {
		_ = json.Unmarshal(req, &in)
	}
	stream := g.kinesisStream(in)
	var out struct{ ShardIterator, NextShardIterator, NextToken string }
	if json.Unmarshal(body, &out) == nil {
		for _, tok := range []string{out.ShardIterator, out.NextShardIterator, out.NextToken} {
			g.tokens.put(tok, stream)
		}
	}
	return nil
}

type requestBodyKey struct{}

// hideMissing turns the emulator's 404 for a missing object into S3's 403 for a caller without
// s3:ListBucket on the bucket, and counts the call denied.
func (g *Gatekeeper) hideMissing(resp *http.Response, m *missingObject) error {
	resp.Body.Close()
	g.stats.recount(m.principal.Name, &Denial{Principal: m.principal.Name, Action: m.list.Action, Resource: m.list.Resource,
		Why: "the object does not exist, and without s3:ListBucket S3 does not say so"})
	g.cfg.Logger.Error("access denied", "principal", m.principal.Name, "arn", m.principal.ARN, "action", m.list.Action,
		"resource", m.list.Resource, "why", "a missing object, answered 403 without s3:ListBucket")
	rec := &responseRecorder{header: http.Header{}}
	refuse(rec, resp.Request, s3Service, accessDenied, deniedMessage(s3Service, m.principal.ARN, m.list, false))
	resp.StatusCode, resp.Status = rec.status, http.StatusText(rec.status)
	resp.Header = rec.header
	resp.Body = io.NopCloser(bytes.NewReader(rec.body.Bytes()))
	resp.ContentLength = int64(rec.body.Len())
	return nil
}

// responseRecorder is an http.ResponseWriter that keeps what is written.
type responseRecorder struct {
	header http.Header
	status int
	body   bytes.Buffer
}

func (r *responseRecorder) Header() http.Header         { return r.header }
func (r *responseRecorder) WriteHeader(status int)      { r.status = status }
func (r *responseRecorder) Write(b []byte) (int, error) { return r.body.Write(b) }
