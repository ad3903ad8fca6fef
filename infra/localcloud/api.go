package localcloud

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/aws/aws-lambda-go/events"

	"github.com/onceflow/onceflow/pkg/xray"
)

// route is one HttpApi event: METHOD /path with {param} and {proxy+} segments.
type route struct {
	function string
	method   string // ANY matches every method
	segments []string
	key      string // the routeKey, "GET /notes/{id}"
	auth     *jwtAuth
}

// apiShim turns HTTP requests into API Gateway HTTP API (payload 2.0) events and the
// function's response back into HTTP. Like API Gateway, it answers 401 itself for a route
// behind a JWT authorizer whose request has no valid token, and passes the token's claims on.
type apiShim struct {
	routes  []route
	issuer  *Issuer // verifies the tokens of routes behind a JWT authorizer
	invoker Invoker
	timeout time.Duration
	onError func(msg string, args ...any)
}

func newRoute(function string, ev Event) route {
	path := "/" + strings.Trim(ev.Path, "/")
	return route{function: function, method: ev.Method, segments: strings.Split(strings.Trim(path, "/"), "/"),
		key: ev.Method + " " + path}
}

// match reports whether r serves method and path, with the path parameters it binds.
func (r route) match(method, path string) (map[string]string, bool) {
	if r.method != "ANY" && r.method != method {
		return nil, false
	}
	parts := strings.Split(strings.Trim(path, "/"), "/")
	params := map[string]string{}
	for i, seg := range r.segments {
		if strings.HasPrefix(seg, "{") && strings.HasSuffix(seg, "+}") {
			if i >= len(parts) {
				return nil, false
			}
			params[strings.TrimSuffix(seg[1:], "+}")] = strings.Join(parts[i:], "/")
			return params, true
		}
		if i >= len(parts) {
			return nil, false
		}
		if strings.HasPrefix(seg, "{") && strings.HasSuffix(seg, "}") {
			if parts[i] == "" {
				return nil, false
			}
			params[seg[1:len(seg)-1]] = parts[i]
			continue
		}
		if seg != parts[i] {
			return nil, false
		}
	}
	return params, len(parts) == len(r.segments)
}

// find picks the matching route, preferring exact methods and more literal segments, as API
// Gateway prefers the most specific route.
func (a *apiShim) find(method, path string) (route, map[string]string, bool) {
	best, bestScore, found := route{}, -1, false
	var bestParams map[string]string
	for _, r := range a.routes {
		params, ok := r.match(method, path)
		if !ok {
			continue
		}
		score := 2*(len(r.segments)-len(params)) + len(r.segments)*4
		if r.method != "ANY" {
			score++
		}
		if score > bestScore {
			best, bestScore, bestParams, found = r, score, params, true
		}
	}
	return best, bestParams, found
}

func (a *apiShim) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	r, params, ok := a.find(req.Method, req.URL.Path)
	if !ok {
		writeJSON404(w)
		return
	}
	var authz *events.APIGatewayV2HTTPRequestContextAuthorizerDescription
	if r.auth != nil {
		var err error
		if authz, err = a.authenticate(req, r.auth); err != nil {
			a.onError("api unauthorized", "route", r.key, "authorizer", r.auth.name, "err", err)
			writeUnauthorized(w)
			return
		}
	}
	body, err := io.ReadAll(req.Body)
	if err != nil {
		http.Error(w, `{"message":"Bad Request"}`, http.StatusBadRequest)
		return
	}
	// API Gateway passes the client's trace header on, or starts a trace, in the event's
	// headers and to Lambda, which makes it the invocation's trace.
	trace := req.Header.Get(xray.HTTPHeader)
	if xray.TraceID(trace) == "" {
		trace = xray.NewHeader(time.Now())
	}
	ev := apiEvent(req, r, params, body, authz)
	ev.Headers[strings.ToLower(xray.HTTPHeader)] = trace
	payload, err := json.Marshal(ev)
	if err != nil {
		http.Error(w, `{"message":"Internal Server Error"}`, http.StatusInternalServerError)
		return
	}
	ctx, cancel := context.WithTimeout(xray.NewContext(req.Context(), trace), a.timeout)
	defer cancel()
	out, err := a.invoker.Invoke(ctx, r.function, payload)
	if err != nil {
		a.onError("api invoke", "route", r.key, "err", err)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusInternalServerError)
		_, _ = io.WriteString(w, `{"message":"Internal Server Error"}`)
		return
	}
	writeAPIResponse(w, out)
}

func writeJSON404(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusNotFound)
	_, _ = io.WriteString(w, `{"message":"Not Found"}`)
}

func apiEvent(req *http.Request, r route, params map[string]string, body []byte,
	authz *events.APIGatewayV2HTTPRequestContextAuthorizerDescription) events.APIGatewayV2HTTPRequest {
	now := time.Now().UTC()
	ev := events.APIGatewayV2HTTPRequest{
		Version:        "2.0",
		RouteKey:       r.key,
		RawPath:        req.URL.Path,
		RawQueryString: req.URL.RawQuery,
		Headers:        map[string]string{},
		PathParameters: params,
		RequestContext: events.APIGatewayV2HTTPRequestContext{
			RouteKey: r.key, AccountID: Account, Stage: "$default", APIID: "local", Authorizer: authz,
			RequestID: fmt.Sprintf("local-%d", now.UnixNano()), DomainName: req.Host, DomainPrefix: "local",
			Time: now.Format("02/Jan/2006:15:04:05 -0700"), TimeEpoch: now.UnixMilli(),
			HTTP: events.APIGatewayV2HTTPRequestContextHTTPDescription{
				Method: req.Method, Path: req.URL.Path, Protocol: req.Proto,
				SourceIP: strings.Split(req.RemoteAddr, ":")[0], UserAgent: req.UserAgent()},
		},
	}
	if len(params) == 0 {
		ev.PathParameters = nil
	}
	for k, v := range req.Header {
		if strings.EqualFold(k, "Cookie") {
			ev.Cookies = append(ev.Cookies, strings.Split(strings.Join(v, "; "), "; ")...)
			continue
		}
		ev.Headers[strings.ToLower(k)] = strings.Join(v, ",")
	}
	ev.Headers["host"] = req.Host
	if q := req.URL.Query(); len(q) > 0 {
		ev.QueryStringParameters = map[string]string{}
		for k, v := range q {
			ev.QueryStringParameters[k] = strings.Join(v, ",")
		}
	}
	if utf8.Valid(body) {
		ev.Body = string(body)
	} else {
		ev.Body, ev.IsBase64Encoded = base64.StdEncoding.EncodeToString(body), true
	}
	return ev
}

// writeAPIResponse writes an APIGatewayV2HTTPResponse; a payload without statusCode is, as in
// payload format 2.0, a 200 JSON body.
func writeAPIResponse(w http.ResponseWriter, out []byte) {
	var probe map[string]json.RawMessage
	var resp events.APIGatewayV2HTTPResponse
	if json.Unmarshal(out, &probe) != nil || probe["statusCode"] == nil || json.Unmarshal(out, &resp) != nil {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(out)
		return
	}
	for k, vs := range resp.MultiValueHeaders {
		for _, v := range vs {
			w.Header().Add(k, v)
		}
	}
	for k, v := range resp.Headers {
		w.Header().Set(k, v)
	}
	for _, c := range resp.Cookies {
		w.Header().Add("Set-Cookie", c)
	}
	body := []byte(resp.Body)
	if resp.IsBase64Encoded {
		if b, err := base64.StdEncoding.DecodeString(resp.Body); err == nil {
			body = b
		}
	}
	w.WriteHeader(resp.StatusCode)
	_, _ = w.Write(body)
}
