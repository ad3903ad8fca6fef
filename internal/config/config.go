package config

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/onceflow/onceflow/pkg/idempotency"
)

// Environment variable names the functions read.
const (
	AppTable           = "APP_TABLE"
	IdempotencyTable   = "IDEMPOTENCY_TABLE"
	LedgerConsumerName = "LEDGER_CONSUMER_NAME" // the api's: the ledger consumer whose holds it reads
	NotesQueueURL      = "NOTES_QUEUE_URL"
	LedgerQueueURL     = "LEDGER_QUEUE_URL"
	DeadLetterQueueURL = "DEAD_LETTER_QUEUE_URL"
	LogLevel           = "LOG_LEVEL"
	RetentionDays      = "RETENTION_DAYS"
	ConsumerName       = "CONSUMER_NAME"
	// MaxReceiveCount is the maxReceiveCount of the consumer's queue's redrive policy, so that
	// a message the queue moves by itself still holds its group (sqsbatch.Config.MaxReceiveCount).
	MaxReceiveCount = "MAX_RECEIVE_COUNT"
	// NotificationsQueueURL is the note-notifier's own queue, a second route of note.created.
	NotificationsQueueURL = "NOTIFICATIONS_QUEUE_URL"
	// WebhookURLParameter and WebhookSecretParameter name the SSM Parameter Store
	// parameters (SecureString) holding the webhook URL and its signing secret: names, never
	// the values, which the note-notifier reads at init.
	WebhookURLParameter    = "WEBHOOK_URL_PARAMETER"
	WebhookSecretParameter = "WEBHOOK_SECRET_PARAMETER"
	// OutboxRouteList is every route of the relay in one variable, TYPE=QUEUE_URL comma-separated
	// (the template's OutboxRoutes output, resolved): when set, the relay reads its routes from
	// it alone, so that a new consumer's route is a line of the template, not of this package.
	OutboxRouteList = "OUTBOX_ROUTES"
	// OutboxParkQueueURL is the FIFO queue where the relay parks outbox items SQS refuses.
	OutboxParkQueueURL = "OUTBOX_PARK_QUEUE_URL"
	// AuthScopePrefix is what the API's scopes are prefixed with in tokens (see API.ScopePrefix).
	AuthScopePrefix = "AUTH_SCOPE_PREFIX"
	// PayloadBucket is the S3 bucket of claim checks: payloads past SQS's limit, which a
	// consumer reads when a message points to one (pkg/claimcheck). Optional.
	PayloadBucket = "PAYLOAD_BUCKET"
)

// DefaultNotifierName is the note-notifier's consumer name when CONSUMER_NAME is unset.
const DefaultNotifierName = "note-notifier"

// OutboxRoutes maps each event type the outbox relay publishes to the environment variables
// holding the URLs of the FIFO queues that receive it, read when OUTBOX_ROUTES is unset. The
// template sets OUTBOX_ROUTES, which a new consumer extends (docs/consumer.md); these are the
// first consumers' variables, kept for a relay configured by them.
var OutboxRoutes = map[string][]string{
	"note.created":     {NotesQueueURL, NotificationsQueueURL},
	"account.credited": {LedgerQueueURL},
	"account.debited":  {LedgerQueueURL},
}

// DefaultRetention is how long idempotency records are kept when RETENTION_DAYS is unset: the
// engine's default.
const DefaultRetention = idempotency.DefaultRetention

// Common is what every function reads.
type Common struct {
	LogLevel string // LOG_LEVEL: debug, info, warn or error; default info
}

// Level is the log level, for the logger built before the rest of the configuration is used.
func (c Common) Level() string { return c.LogLevel }

// API configures the api function.
type API struct {
	Common
	AppTable string // APP_TABLE
	// IdempotencyTable (IDEMPOTENCY_TABLE) and LedgerConsumer (LEDGER_CONSUMER_NAME), optional
	// and together: where the API reads the ledger's hold of an account, to answer a held
	// movement's status.
	IdempotencyTable string
	LedgerConsumer   string
	// ScopePrefix (AUTH_SCOPE_PREFIX, optional) prefixes the API's scopes in tokens: a Cognito
	// resource server's identifier and a slash ("https://api.example.com/"), "" for bare scopes.
	ScopePrefix string
}

// Relay configures the outbox-relay function.
type Relay struct {
	Common
	// Routes maps an event type to the URLs of the queues that receive it, resolved from
	// OutboxRoutes.
	Routes map[string][]string
	// ParkQueueURL (OUTBOX_PARK_QUEUE_URL) receives the outbox items SQS refuses.
	ParkQueueURL string
}

// Consumer configures an idempotent consumer function (note-tagger, ledger).
type Consumer struct {
	Common
	Name               string        // CONSUMER_NAME: part of every idempotency key
	AppTable           string        // APP_TABLE: where the effects go
	IdempotencyTable   string        // IDEMPOTENCY_TABLE: where the records go
	DeadLetterQueueURL string        // DEAD_LETTER_QUEUE_URL: where malformed messages go
	Retention          time.Duration // RETENTION_DAYS: record lifetime; default 30 days
	MaxReceiveCount    int           // MAX_RECEIVE_COUNT: the queue's maxReceiveCount; 0 when unset
	PayloadBucket      string        // PAYLOAD_BUCKET: claim checks' bucket; "" reads every body as the payload
}

// ConsumerName is the consumer's name, the dimension of its metrics.
func (c Consumer) ConsumerName() string { return c.Name }

// ConsumerName is the consumer's name, the dimension of its metrics.
func (c Notifier) ConsumerName() string { return c.Name }

// Notifier configures the note-notifier function, a leased consumer whose effect is a webhook
// call.
type Notifier struct {
	Common
	Name               string        // CONSUMER_NAME: part of every idempotency key; default note-notifier
	IdempotencyTable   string        // IDEMPOTENCY_TABLE: where the lease records go
	DeadLetterQueueURL string        // DEAD_LETTER_QUEUE_URL: where malformed and refused messages go
	Retention          time.Duration // RETENTION_DAYS: record lifetime; default 30 days
	PayloadBucket      string        // PAYLOAD_BUCKET: claim checks' bucket; "" reads every body as the payload
	// WebhookURLParameter (WEBHOOK_URL_PARAMETER) and WebhookSecretParameter
	// (WEBHOOK_SECRET_PARAMETER) are the names of the SSM parameters holding the webhook URL
	// and signing secret.
	WebhookURLParameter, WebhookSecretParameter string
}

func loadCommon(getenv func(string) string) Common {
	c := Common{LogLevel: getenv(LogLevel)}
	if c.LogLevel == "" {
		c.LogLevel = "info"
	}
	return c
}

func (c Common) validate() error {
	switch c.LogLevel {
	case "debug", "info", "warn", "error":
		return nil
	}
	return fmt.Errorf("%s: %q is not one of debug, info, warn, error", LogLevel, c.LogLevel)
}

func required(name, value string) error {
	if value == "" {
		return fmt.Errorf("%s: required", name)
	}
	return nil
}

// LoadAPI reads the api function's configuration.
func LoadAPI(getenv func(string) string) (API, error) {
	c := API{Common: loadCommon(getenv), AppTable: getenv(AppTable), ScopePrefix: getenv(AuthScopePrefix),
		IdempotencyTable: getenv(IdempotencyTable), LedgerConsumer: getenv(LedgerConsumerName)}
	return c, c.Validate()
}

// Validate reports every problem of c.
func (c API) Validate() error {
	var errs []error
	if (c.IdempotencyTable == "") != (c.LedgerConsumer == "") {
		errs = append(errs, fmt.Errorf("%s and %s: set both or neither", IdempotencyTable, LedgerConsumerName))
	}
	return errors.Join(append(errs, c.validate(), required(AppTable, c.AppTable))...)
}

// LoadRelay reads the outbox-relay function's configuration: its routes from OUTBOX_ROUTES,
// or, when that is unset, from every variable of OutboxRoutes.
func LoadRelay(getenv func(string) string) (Relay, error) {
	c := Relay{Common: loadCommon(getenv), Routes: map[string][]string{}, ParkQueueURL: getenv(OutboxParkQueueURL)}
	if list := getenv(OutboxRouteList); list != "" {
		routes, err := ParseRoutes(list)
		c.Routes = routes
		return c, errors.Join(err, c.Validate())
	}
	var errs []error
	for _, typ := range slices.Sorted(maps.Keys(OutboxRoutes)) {
		for _, name := range OutboxRoutes[typ] {
			url := getenv(name)
			if url == "" {
				errs = append(errs, fmt.Errorf("%s: required (queue for %s)", name, typ))
				continue
			}
			c.Routes[typ] = append(c.Routes[typ], url)
		}
	}
	return c, errors.Join(append(errs, c.Validate())...)
}

// ParseRoutes reads routes written TYPE=QUEUE_URL, comma-separated (OUTBOX_ROUTES, and the
// template's OutboxRoutes output): the queues of each type in the order written.
func ParseRoutes(list string) (map[string][]string, error) {
	routes := map[string][]string{}
	var errs []error
	for _, r := range strings.Split(list, ",") {
		typ, url, ok := strings.Cut(strings.TrimSpace(r), "=")
		if !ok || typ == "" || url == "" {
			errs = append(errs, fmt.Errorf("%s: route %q: want TYPE=QUEUE_URL", OutboxRouteList, r))
			continue
		}
		if slices.Contains(routes[typ], url) {
			errs = append(errs, fmt.Errorf("%s: route %q: given twice", OutboxRouteList, r))
			continue
		}
		routes[typ] = append(routes[typ], url)
	}
	return routes, errors.Join(errs...)
}

// Validate reports every problem of c.
func (c Relay) Validate() error {
	errs := []error{c.validate()}
	if len(c.Routes) == 0 {
		errs = append(errs, errors.New("routes: no event type is routed to a queue"))
	}
	errs = append(errs, required(OutboxParkQueueURL, c.ParkQueueURL))
	return errors.Join(errs...)
}

// LoadConsumer reads an idempotent consumer's configuration.
func LoadConsumer(getenv func(string) string) (Consumer, error) {
	c := Consumer{
		Common:             loadCommon(getenv),
		Name:               getenv(ConsumerName),
		AppTable:           getenv(AppTable),
		IdempotencyTable:   getenv(IdempotencyTable),
		DeadLetterQueueURL: getenv(DeadLetterQueueURL),
		PayloadBucket:      getenv(PayloadBucket),
	}
	var err, rerr error
	c.Retention, err = loadRetention(getenv)
	c.MaxReceiveCount, rerr = loadMaxReceiveCount(getenv)
	return c, errors.Join(err, rerr, c.Validate())
}

// loadMaxReceiveCount reads MAX_RECEIVE_COUNT, 0 when unset.
func loadMaxReceiveCount(getenv func(string) string) (int, error) {
	s := getenv(MaxReceiveCount)
	if s == "" {
		return 0, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 {
		return 0, fmt.Errorf("%s: %q is not a positive whole number (the queue's maxReceiveCount)", MaxReceiveCount, s)
	}
	return n, nil
}

// Validate reports every problem of c.
func (c Consumer) Validate() error {
	return errors.Join(
		c.validate(),
		required(ConsumerName, c.Name),
		required(AppTable, c.AppTable),
		required(IdempotencyTable, c.IdempotencyTable),
		required(DeadLetterQueueURL, c.DeadLetterQueueURL),
		validRetention(c.Retention),
	)
}

// LoadNotifier reads the note-notifier's configuration.
func LoadNotifier(getenv func(string) string) (Notifier, error) {
	c := Notifier{
		Common:             loadCommon(getenv),
		Name:               getenv(ConsumerName),
		IdempotencyTable:   getenv(IdempotencyTable),
		DeadLetterQueueURL: getenv(DeadLetterQueueURL),

		WebhookURLParameter:    getenv(WebhookURLParameter),
		WebhookSecretParameter: getenv(WebhookSecretParameter),
		PayloadBucket:          getenv(PayloadBucket),
	}
	if c.Name == "" {
		c.Name = DefaultNotifierName
	}
	var err error
	c.Retention, err = loadRetention(getenv)
	return c, errors.Join(err, c.Validate())
}

// Validate reports every problem of c.
func (c Notifier) Validate() error {
	return errors.Join(
		c.validate(),
		required(ConsumerName, c.Name),
		required(IdempotencyTable, c.IdempotencyTable),
		parameterName(WebhookURLParameter, c.WebhookURLParameter),
		parameterName(WebhookSecretParameter, c.WebhookSecretParameter),
		required(DeadLetterQueueURL, c.DeadLetterQueueURL),
		validRetention(c.Retention),
	)
}

// loadRetention reads RETENTION_DAYS, DefaultRetention when unset. A bad value is reported
// and DefaultRetention returned with it.
func loadRetention(getenv func(string) string) (time.Duration, error) {
	s := getenv(RetentionDays)
	if s == "" {
		return DefaultRetention, nil
	}
	days, err := strconv.Atoi(s)
	if err != nil || days < 1 {
		return DefaultRetention, fmt.Errorf("%s: %q is not a positive whole number of days", RetentionDays, s)
	}
	return time.Duration(days) * 24 * time.Hour, nil
}

func validRetention(d time.Duration) error {
	if d <= 0 {
		return fmt.Errorf("%s: retention must be positive", RetentionDays)
	}
	return nil
}

// parameterName reports a missing SSM parameter name, or one that is not a path (a
// parameter name with a slash must start with one; the template's IAM policy assumes it).
func parameterName(name, value string) error {
	if value == "" {
		return required(name, value)
	}
	if !strings.HasPrefix(value, "/") {
		return fmt.Errorf("%s: %q is not an SSM parameter name starting with /", name, value)
	}
	return nil
}
