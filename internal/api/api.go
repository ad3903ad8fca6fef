package api

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go"
	"github.com/google/uuid"

	"github.com/onceflow/onceflow/pkg/operator"
)

// DB is the part of the DynamoDB client the API uses. *dynamodb.Client implements it; it must
// be safe for concurrent use.
type DB interface {
	TransactWriteItems(ctx context.Context, in *dynamodb.TransactWriteItemsInput, opts ...func(*dynamodb.Options)) (*dynamodb.TransactWriteItemsOutput, error)
	GetItem(ctx context.Context, in *dynamodb.GetItemInput, opts ...func(*dynamodb.Options)) (*dynamodb.GetItemOutput, error)
	Query(ctx context.Context, in *dynamodb.QueryInput, opts ...func(*dynamodb.Options)) (*dynamodb.QueryOutput, error)
}

// Config configures a Handler. DB and Table are required.
type Config struct {
	DB     DB
	Table  string           // the app table
	Logger *slog.Logger     // default: slog.Default()
	Now    func() time.Time // default: time.Now
	NewID  func() string    // new note ids; default: random UUIDs
	// ScopePrefix, when set, is what the access rules' scopes carry in tokens (a Cognito
	// resource server's "https://api.example.com/"): only scopes with it count, without it.
	ScopePrefix string
	// Holds, when set, reads the ledger consumer's hold of an account (an *operator.Admin of
	// the idempotency table): a pending movement of a held account then answers "held" and
	// what it is held behind, at the cost of one GetItem, made only for pending movements.
	Holds Holds
	// LedgerConsumer is the ledger consumer's name, whose holds Holds reads; required with it.
	LedgerConsumer string
}

// Holds reads a consumer's hold of a message group. *operator.Admin implements it; it must
// be safe for concurrent use.
type Holds interface {
	Hold(ctx context.Context, consumer, group string) (operator.Hold, bool, error)
}

// Validate reports every problem of c.
func (c Config) Validate() error {
	var errs []error
	if c.DB == nil {
		errs = append(errs, errors.New("api: db is required"))
	}
	if c.Table == "" {
		errs = append(errs, errors.New("api: table is required"))
	}
	if (c.Holds == nil) != (c.LedgerConsumer == "") {
		errs = append(errs, errors.New("api: holds and ledger consumer go together"))
	}
	return errors.Join(errs...)
}

// Handler serves the HTTP API. It is safe for concurrent use.
type Handler struct {
	cfg Config
}

// New returns a Handler, or the problems of cfg.
func New(cfg Config) (*Handler, error) {
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.NewID == nil {
		cfg.NewID = uuid.NewString
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return &Handler{cfg: cfg}, nil
}

// Handle serves one request. It never returns an error: failures are HTTP responses. Every
// route is first checked against the access rules (see PrincipalOf): 401 without verified
// token claims, 403 without the right, 404 for a route without a rule.
func (h *Handler) Handle(ctx context.Context, req events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error) {
	ctx = traced(ctx, req)
	method, segs, ok := route(req)
	if !ok {
		return respondError(http.StatusNotFound, "no such route"), nil
	}
	if refused, ok := authorize(req, method, segs, h.cfg.ScopePrefix); !ok {
		return refused, nil
	}
	var resp events.APIGatewayV2HTTPResponse
	var err error
	switch {
	case method == http.MethodPost && len(segs) == 1 && segs[0] == "notes":
		resp, err = h.createNote(ctx, req)
	case method == http.MethodGet && len(segs) == 2 && segs[0] == "notes":
		resp, err = h.getNote(ctx, segs[1])
	case method == http.MethodGet && len(segs) == 2 && segs[0] == "tags":
		resp, err = h.getTag(ctx, segs[1])
	case method == http.MethodGet && len(segs) == 2 && segs[0] == "accounts":
		resp, err = h.getAccount(ctx, req, segs[1])
	case method == http.MethodPost && len(segs) == 3 && segs[0] == "accounts" && (segs[2] == "credits" || segs[2] == "debits"):
		resp, err = h.move(ctx, req, segs[1], segs[2])
	case method == http.MethodGet && len(segs) == 4 && segs[0] == "accounts" && segs[2] == "movements":
		resp, err = h.getMovement(ctx, segs[1], segs[3])
	default:
		return respondError(http.StatusNotFound, "no such route"), nil
	}
	if err != nil {
		return h.failure(ctx, method, segs, err), nil
	}
	return resp, nil
}

// failure turns an error into a response: field errors are the client's, throttling and
// transaction conflicts are worth a retry (503), the rest are internal (500).
func (h *Handler) failure(ctx context.Context, method string, segs []string, err error) events.APIGatewayV2HTTPResponse {
	var fe *fieldError
	if errors.As(err, &fe) {
		return respondField(fe)
	}
	var api smithy.APIError
	if errors.As(err, &api) && isTransient(api) {
		h.cfg.Logger.WarnContext(ctx, "request failed, retryable", "method", method, "path", "/"+strings.Join(segs, "/"), "error", err)
		return respondError(http.StatusServiceUnavailable, "temporarily unavailable; retry the request")
	}
	h.cfg.Logger.ErrorContext(ctx, "request failed", "method", method, "path", "/"+strings.Join(segs, "/"), "error", err)
	return respondError(http.StatusInternalServerError, "internal error")
}

func isTransient(err smithy.APIError) bool {
	var tce *types.TransactionCanceledException
	if errors.As(err, &tce) {
		for _, r := range tce.CancellationReasons {
			switch aws.ToString(r.Code) {
			case "TransactionConflict", "ThrottlingError", "ProvisionedThroughputExceeded":
				return true
			}
		}
		return false
	}
	switch err.ErrorCode() {
	case "ProvisionedThroughputExceededException", "ThrottlingException", "RequestLimitExceeded",
		"TransactionConflictException", "TransactionInProgressException", "InternalServerError":
		return true
	}
	return false
}

// route returns the request's method and unescaped path segments, without a stage prefix.
func route(req events.APIGatewayV2HTTPRequest) (string, []string, bool) {
	method := req.RequestContext.HTTP.Method
	path := req.RawPath
	if path == "" {
		path = req.RequestContext.HTTP.Path
	}
	if st := req.RequestContext.Stage; st != "" && st != "$default" {
		path = strings.TrimPrefix(path, "/"+st)
	}
	parts := strings.Split(strings.Trim(path, "/"), "/")
	for i, p := range parts {
		s, err := url.PathUnescape(p)
		if err != nil || s == "" {
			return "", nil, false
		}
		parts[i] = s
	}
	return strings.ToUpper(method), parts, true
}
