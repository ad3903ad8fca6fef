package gatekeeper

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httputil"
	"net/url"
	"slices"
	"strings"
	"sync"

	"github.com/onceflow/onceflow/infra/iam"
)

// Principal is a caller the gatekeeper knows by its access key id, with the policies IAM
// would evaluate for it.
type Principal struct {
	Name        string // for logs and Stats: a function's logical id, a managed policy's
	ARN         string // as AWS names it in a refusal: arn:aws:sts::<account>:assumed-role/<role>/<session>
	AccessKeyID string
	Policies    []iam.Policy
}

// roleARN is aws:PrincipalArn of the principal: for a role session
// (arn:aws:sts::<account>:assumed-role/<role>/<session>) the role's ARN,
// arn:aws:iam::<account>:role/<role>, as IAM gives it for a role session; else its ARN. The
// local roles have no path.
func (p *Principal) roleARN() string {
	rest, ok := strings.CutPrefix(p.ARN, "arn:aws:sts::")
	if !ok {
		return p.ARN
	}
	acct, role, ok := strings.Cut(rest, ":assumed-role/")
	if !ok {
		return p.ARN
	}
	role, _, _ = strings.Cut(role, "/")
	return "arn:aws:iam::" + acct + ":role/" + role
}

// Table is what a DynamoDB request names by table name and the gatekeeper needs: the
// partition key's attribute name of the table and of each index (by index name), for the
// dynamodb:LeadingKeys condition key.
type Table struct {
	HashKey string
	Indexes map[string]string
}

// Config configures a Gatekeeper.
type Config struct {
	// Region and Account make the ARNs of resources a request names by name or URL.
	Region, Account string
	// Principals are the callers; a request signed with any other key is refused.
	Principals []Principal
	// Table returns a table's key schema by name; an error leaves the request without leading
	// keys (a table that does not exist: the emulator answers it).
	Table func(ctx context.Context, name string) (Table, error)
	// CanonicalARN rewrites an ARN an emulator gives (DynamoDB Local's stream ARNs name the
	// region "ddblocal") into the one AWS would; nil leaves ARNs as they are. Policies must be
	// given with the same ARNs.
	CanonicalARN func(string) string
	// Logger hears of every refusal (error level: the principal, action, resource and the
	// statement that came closest). Default: discard.
	Logger *slog.Logger
}

// knownKeys are the condition keys the gatekeeper computes for a request; a policy reading
// another is refused at New, never evaluated as if the key were absent.
var knownKeys = []string{"dynamodb:leadingkeys", "aws:principalarn", "aws:principalaccount", "aws:requestedregion",
	"aws:securetransport", "s3:prefix", "s3:delimiter", "s3:max-keys"}

// Gatekeeper authorises calls. Its methods are safe for concurrent use.
type Gatekeeper struct {
	cfg        Config
	principals map[string]*Principal
	tables     sync.Map // name → Table, once known
	tokens     tokens   // Kinesis iterators and list tokens → stream ARN
	stats      counters
}

// New returns a gatekeeper for the principals, or why one of their policies cannot be
// evaluated faithfully.
func New(cfg Config) (*Gatekeeper, error) {
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.CanonicalARN == nil {
		cfg.CanonicalARN = func(s string) string { return s }
	}
	g := &Gatekeeper{cfg: cfg, principals: map[string]*Principal{}}
	var errs []error
	for i := range cfg.Principals {
		p := &cfg.Principals[i]
		if p.AccessKeyID == "" {
			errs = append(errs, fmt.Errorf("principal %s: no access key id", p.Name))
		}
		if _, dup := g.principals[p.AccessKeyID]; dup {
			errs = append(errs, fmt.Errorf("principal %s: access key id %s taken", p.Name, p.AccessKeyID))
		}
		g.principals[p.AccessKeyID] = p
		if err := CheckPolicies(p.Policies); err != nil {
			errs = append(errs, fmt.Errorf("principal %s: %w", p.Name, err))
		}
	}
	return g, errors.Join(errs...)
}

// CheckPolicies says what of policies the gatekeeper cannot decide as AWS does: a condition
// key it does not compute for a request, by policy, statement (index and Sid) and condition;
// nil when it can decide them all. (What the evaluator itself cannot evaluate, iam.ParsePolicy
// refuses.)
func CheckPolicies(policies []iam.Policy) error {
	var errs []error
	for _, pol := range policies {
		for i, st := range pol.Statements {
			for _, c := range st.Conditions {
				if !slices.Contains(knownKeys, c.Key) {
					errs = append(errs, fmt.Errorf("policy %s %s: Condition %s %s: the gatekeeper does not compute this condition key (it computes %s)",
						pol.Name, iam.StatementName(i, st.Sid), c.Operator, c.Key, strings.Join(knownKeys, ", ")))
				}
			}
		}
	}
	return errors.Join(errs...)
}

// Stats returns the calls decided so far.
func (g *Gatekeeper) Stats() Stats { return g.stats.snapshot() }

// Handler returns the gatekeeper in front of the emulators: upstreams are their endpoints by
// service (dynamodb, which serves DynamoDB Streams too, sqs, s3, kinesis, ssm). A call to a
// service without an upstream is refused.
func (g *Gatekeeper) Handler(upstreams map[string]string) (http.Handler, error) {
	h := &handler{g: g, proxies: map[string]*httputil.ReverseProxy{}}
	for service, target := range upstreams {
		u, err := url.Parse(target)
		if err != nil {
			return nil, fmt.Errorf("upstream %s: %w", service, err)
		}
		h.proxies[service] = &httputil.ReverseProxy{
			// The Host stays the caller's: fauxqs names queue URLs after it.
			Rewrite:        func(r *httputil.ProxyRequest) { r.SetURL(u); r.Out.Host = r.In.Host },
			ModifyResponse: g.observe,
			ErrorHandler: func(w http.ResponseWriter, r *http.Request, err error) {
				if r.Context().Err() == nil {
					g.cfg.Logger.Warn("gatekeeper: upstream", "service", service, "err", err)
				}
				w.WriteHeader(http.StatusBadGateway)
			},
		}
	}
	return h, nil
}

type handler struct {
	g       *Gatekeeper
	proxies map[string]*httputil.ReverseProxy
}

func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	cred, signed := readCredential(r)
	service := cred.service
	if !signed {
		service = guessService(r)
	}
	proxy, ok := h.proxies[service]
	if !ok {
		http.Error(w, "gatekeeper: no emulator for service "+service, http.StatusBadGateway)
		return
	}
	g := h.g
	p, known := g.principals[cred.accessKey]
	switch {
	case !signed:
		g.refuseCaller(w, r, service, unsigned, "an unsigned request")
		return
	case !known:
		g.refuseCaller(w, r, service, unknownKey, "access key "+cred.accessKey)
		return
	}
	reqs, err := g.requests(r.Context(), service, r, body)
	if err != nil {
		g.stats.count(p.Name, &Denial{Principal: p.Name, Action: service + ":?", Resource: "?", Why: err.Error()})
		g.cfg.Logger.Error("gatekeeper: unreadable request refused", "principal", p.Name, "service", service, "err", err)
		http.Error(w, "gatekeeper: "+err.Error(), http.StatusBadRequest)
		return
	}
	for _, q := range reqs {
		q.Context = g.withGlobalKeys(q.Context, p, cred.region)
		d := iam.Evaluate(p.Policies, q)
		if d.Allowed {
			continue
		}
		g.deny(w, r, service, p, q, d)
		return
	}
	g.stats.count(p.Name, nil)
	switch service {
	case s3Service:
		r = g.withListRight(r, p, reqs)
	case kinesisService: // observe reads it to note the tokens the answer hands out
		r = r.WithContext(context.WithValue(r.Context(), requestBodyKey{}, body))
	}
	proxy.ServeHTTP(w, r)
}

// deny answers, logs and counts a refused authorisation.
func (g *Gatekeeper) deny(w http.ResponseWriter, r *http.Request, service string, p *Principal, q iam.Request, d iam.Decision) {
	closest, why := "", d.Why
	switch {
	case d.Explicit():
		why = "refused by an explicit Deny, " + d.By.String()
	case d.Closest != nil:
		closest = d.Closest.String()
	}
	g.stats.count(p.Name, &Denial{Principal: p.Name, Action: q.Action, Resource: q.Resource, Closest: closest, Why: why})
	g.cfg.Logger.Error("access denied", "principal", p.Name, "arn", p.ARN, "action", q.Action, "resource", q.Resource,
		"leadingKeys", q.Context["dynamodb:leadingkeys"], "closest", closest, "why", why)
	refuse(w, r, service, accessDenied, deniedMessage(service, p.ARN, q, d.Explicit()))
}

func (g *Gatekeeper) refuseCaller(w http.ResponseWriter, r *http.Request, service string, why refusal, who string) {
	g.stats.count("unknown", &Denial{Principal: "unknown", Action: service + ":*", Resource: "*", Why: who})
	g.cfg.Logger.Error("access denied: unknown caller", "service", service, "caller", who, "target", r.Header.Get("X-Amz-Target"),
		"path", r.URL.Path)
	refuse(w, r, service, why, "")
}

// Context returns the condition keys of a request of principal p as the gatekeeper evaluates
// them: ctx, the request's own (lower-cased), and the global keys every request has
// (aws:PrincipalArn, aws:PrincipalAccount, aws:RequestedRegion, aws:SecureTransport).
func (g *Gatekeeper) Context(p *Principal, ctx map[string][]string) map[string][]string {
	return g.withGlobalKeys(ctx, p, "")
}

// withGlobalKeys adds the global condition keys every request has.
func (g *Gatekeeper) withGlobalKeys(ctx map[string][]string, p *Principal, region string) map[string][]string {
	out := make(map[string][]string, len(ctx)+4)
	for k, v := range ctx {
		out[k] = v
	}
	if region == "" {
		region = g.cfg.Region
	}
	out["aws:principalarn"] = []string{p.roleARN()}
	out["aws:principalaccount"] = []string{g.cfg.Account}
	out["aws:requestedregion"] = []string{region}
	out["aws:securetransport"] = []string{"true"} // AWS's endpoints are HTTPS; loopback stands in for them
	return out
}

// requests names the authorisations a call needs.
func (g *Gatekeeper) requests(ctx context.Context, service string, r *http.Request, body []byte) ([]iam.Request, error) {
	var reqs []iam.Request
	var err error
	switch service {
	case dynamodbService:
		reqs, err = g.dynamodbRequests(ctx, r, body)
	case sqsService:
		reqs, err = g.sqsRequests(r, body)
	case s3Service:
		reqs, err = g.s3Requests(r, body)
	case kinesisService:
		reqs, err = g.kinesisRequests(r, body)
	case ssmService:
		reqs, err = g.ssmRequests(r, body)
	default:
		return nil, fmt.Errorf("service %s is not authorised here", service)
	}
	if err == nil {
		err = checkMapped(reqs)
	}
	return reqs, err
}

// Requests returns the authorisations the signed request r needs, as the gatekeeper computes
// them (its body is read and restored), without evaluating them or the global condition keys.
func (g *Gatekeeper) Requests(r *http.Request) ([]iam.Request, error) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return nil, err
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	cred, ok := readCredential(r)
	if !ok {
		return nil, errors.New("unsigned request")
	}
	return g.requests(r.Context(), cred.service, r, body)
}

// target is the operation of an X-Amz-Target header (DynamoDB_20120810.PutItem → PutItem).
func target(r *http.Request) string {
	t := r.Header.Get("X-Amz-Target")
	if i := strings.LastIndexByte(t, '.'); i >= 0 {
		return t[i+1:]
	}
	return t
}
