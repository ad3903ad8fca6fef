package ledger

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/onceflow/onceflow/pkg/cloudevent"
	"github.com/onceflow/onceflow/pkg/idempotency"
)

// Event types and the source of the events this package publishes.
const (
	Credited = "account.credited"
	Debited  = "account.debited"
	Source   = "onceflow/api"
)

// ReasonInsufficientFunds is the rejection reason of a debit larger than the balance.
const ReasonInsufficientFunds = "insufficient funds"

// ReasonBalanceOverflow is the rejection reason of a credit that would take the balance past
// math.MaxInt64.
const ReasonBalanceOverflow = "balance would overflow"

// MaxAmount bounds one movement, in minor units. Many movements could still add up past an
// int64: a credit is guarded against that by its condition (ReasonBalanceOverflow).
const MaxAmount = 1_000_000_000_000

// entryTime is the fixed-width time format of entry sort keys, so they sort by time.
const entryTime = "2006-01-02T15:04:05.000000000Z"

// MovementData is the data of account.credited and account.debited events.
type MovementData struct {
	AccountID string `json:"accountId"`
	Amount    int64  `json:"amount"`
}

// Validate reports the first invalid field.
func (d MovementData) Validate() error {
	switch {
	case d.AccountID == "":
		return cloudevent.Malformed("data.accountId", "missing")
	case d.Amount <= 0:
		return cloudevent.Malformed("data.amount", "is %d; want a positive integer", d.Amount)
	case d.Amount > MaxAmount:
		return cloudevent.Malformed("data.amount", "is %d; at most %d", d.Amount, MaxAmount)
	}
	return nil
}

// Account is an account item.
type Account struct {
	ID      string `dynamodbav:"id"`
	Balance int64  `dynamodbav:"balance"`
}

// Entry is an applied credit or debit.
type Entry struct {
	PK      string `dynamodbav:"pk" json:"-"`
	SK      string `dynamodbav:"sk" json:"-"`
	Kind    string `dynamodbav:"kind" json:"-"`
	EventID string `dynamodbav:"eventId" json:"eventId"`
	Type    string `dynamodbav:"type" json:"type"`
	Amount  int64  `dynamodbav:"amount" json:"amount"`
	At      string `dynamodbav:"at" json:"at"`
}

// PK is the partition key of account id: its account item and its entries.
func PK(id string) string { return "ACCOUNT#" + id }

// EntryPrefix starts the sort key of every entry, "ENTRY#<time>#<eventId>".
const EntryPrefix = "ENTRY#"

// EventID is the stable event id of the movement a caller identifies by reference on account
// id: the same reference gives the same event, so a retried request publishes nothing new.
func EventID(accountID, reference string) string {
	sum := sha256.Sum256([]byte(accountID + "\x00" + reference))
	return "mv-" + hex.EncodeToString(sum[:20])
}

// NewEvent builds the event of a credit (typ Credited) or debit (Debited) of amount on
// account id identified by the caller's reference.
func NewEvent(typ, accountID, reference string, amount int64, at time.Time) (cloudevent.Event, error) {
	if typ != Credited && typ != Debited {
		return cloudevent.Event{}, fmt.Errorf("ledger event type %q is not %s or %s", typ, Credited, Debited)
	}
	return cloudevent.New(EventID(accountID, reference), Source, typ, accountID, at, MovementData{AccountID: accountID, Amount: amount})
}

// Handler returns the ledger consumer's handler: account.credited and account.debited. It is
// strict (idempotency.Strict): a movement of a type it does not know, or with a field it does
// not know, is dead-lettered and holds its account, never acknowledged unapplied, since
// ignoring a movement would leave the balance wrong.
func Handler(table string) *idempotency.Router {
	r := idempotency.NewRouter(idempotency.Strict())
	idempotency.Route(r, Credited, func(ev cloudevent.Event, d MovementData) (idempotency.Effect, error) {
		return Credit(table, ev, d)
	})
	idempotency.Route(r, Debited, func(ev cloudevent.Event, d MovementData) (idempotency.Effect, error) {
		return Debit(table, ev, d)
	})
	return r
}

// Credit is the effect of a credit: the movement is marked applied, the balance grows by the
// amount (the account is created on its first credit) if it stays at or below math.MaxInt64,
// else the event is rejected with ReasonBalanceOverflow and the movement is marked rejected; an
// entry is written.
func Credit(table string, ev cloudevent.Event, d MovementData) (idempotency.Effect, error) {
	balance := expression.Name("balance")
	fits := balance.AttributeNotExists().Or(balance.LessThanEqual(expression.Value(math.MaxInt64 - d.Amount)))
	return movement(table, ev, d, "credit", d.Amount, guard{fits, ReasonBalanceOverflow})
}

// Debit is the effect of a debit: the movement is marked applied and the balance shrinks by the
// amount if it stays at or above zero, else the event is rejected with ReasonInsufficientFunds
// and the movement is marked rejected; an entry is written.
func Debit(table string, ev cloudevent.Event, d MovementData) (idempotency.Effect, error) {
	enough := expression.Name("balance").GreaterThanEqual(expression.Value(d.Amount))
	return movement(table, ev, d, "debit", -d.Amount, guard{enough, ReasonInsufficientFunds})
}

// guard is the condition of a balance update and the reason it is rejected with.
type guard struct {
	cond   expression.ConditionBuilder
	reason string
}

// movement is the effect of a credit or debit. Its first two writes make it idempotent
// without the consumer's record, which expires: the movement's status is set only once, and
// the entry, keyed by the event's time and id, is written only if new; a failure of either
// condition means the event was decided before (a duplicate), whatever else fails.
func movement(table string, ev cloudevent.Event, d MovementData, kind string, delta int64, g guard) (idempotency.Effect, error) {
	if ev.Subject != d.AccountID {
		return nil, cloudevent.Malformed("subject", "%q is not data.accountId %q", ev.Subject, d.AccountID)
	}
	balance := idempotency.Update(table, AccountKey(d.AccountID), expression.
		Add(expression.Name("balance"), expression.Value(delta)).
		Set(expression.Name("id"), expression.Value(d.AccountID)).
		Set(expression.Name("kind"), expression.Value("account")).
		Set(expression.Name("lastEvent"), expression.Value(ev.ID))).
		If(g.cond).OrReject(g.reason).
		OnReject(decided(table, ev, d, kind, StatusRejected, g.reason))
	at := ev.Time.UTC()
	entry := Entry{PK: PK(d.AccountID), SK: EntryPrefix + at.Format(entryTime) + "#" + ev.ID, Kind: "entry",
		EventID: ev.ID, Type: kind, Amount: d.Amount, At: at.Format(time.RFC3339Nano)}
	isNew := expression.Name("pk").AttributeNotExists()
	return idempotency.Effect{
		decided(table, ev, d, kind, StatusApplied, ""),
		idempotency.Put(table, entry).If(isNew).OrDuplicate(),
		balance,
	}, nil
}

// AccountKey returns the primary key of the account item of id.
func AccountKey(id string) map[string]types.AttributeValue {
	return map[string]types.AttributeValue{
		"pk": &types.AttributeValueMemberS{Value: PK(id)},
		"sk": &types.AttributeValueMemberS{Value: "ACCOUNT"},
	}
}
