package operator_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/onceflow/onceflow/pkg/operator"
)

// An operator's round over a held group, as `onceflow hold show` and `onceflow hold skip` make
// it: read the hold, show it, and skip its blocker only if the hold is still the one shown. A
// hold that changed meanwhile (its blocker applied, another message held behind it) is refused
// with operator.ErrChanged, nothing written: read it again, and decide on what is there now.
// (Compiled, not run: it needs a table.)
func Example() {
	ctx := context.Background()
	var cfg aws.Config // config.LoadDefaultConfig(ctx) of github.com/aws/aws-sdk-go-v2/config
	admin := operator.New(dynamodb.NewFromConfig(cfg), "idempotency")

	h, held, err := admin.Hold(ctx, "ledger", "acct-001")
	if err != nil || !held {
		fmt.Println("acct-001 is not held", err)
		return
	}
	fmt.Printf("held behind %s (%s), %d messages held\n", h.Held[0], h.BlockerReason, len(h.Held))

	next, err := admin.SkipBlocker(ctx, h, "alice", "a credit of a closed account; refunded by hand")
	switch {
	case errors.Is(err, operator.ErrChanged):
		fmt.Println("the hold changed since it was shown: look again")
	case err != nil:
		fmt.Println(err)
	case len(next.Held) == 0:
		fmt.Println("acct-001 goes on")
	default:
		fmt.Println("acct-001 is now held behind", next.Held[0])
	}
}

// A dead letter the operator decided not to apply: its event is recorded as discarded (a
// redelivery is answered, never applied) and taken off its group's hold, in one transaction;
// deleting the letter from the dead-letter queue comes next. A letter of an event decided
// already is a copy: nothing is recorded, and operator.ErrDecided says to delete it.
// (Compiled, not run: it needs a table.)
func ExampleAdmin_Discard() {
	ctx := context.Background()
	var cfg aws.Config // config.LoadDefaultConfig(ctx) of github.com/aws/aws-sdk-go-v2/config
	admin := operator.New(dynamodb.NewFromConfig(cfg), "idempotency")

	letter := `{"specversion":"1.0","id":"credit-7","source":"bank/api","type":"account.credited",` +
		`"time":"2026-11-30T10:00:00Z","data":{"accountId":"acct-001","amount":-5}}`
	rec, err := admin.Discard(ctx, operator.Discard{Consumer: "ledger", EventID: "credit-7", MessageID: "m-7",
		Group: "acct-001", Body: letter, By: "alice", Why: "a negative credit; the customer was told"})
	switch {
	case errors.Is(err, operator.ErrDecided):
		fmt.Println("decided already:", rec.Outcome, "- delete the letter")
	case errors.Is(err, operator.ErrChanged):
		fmt.Println("applied or decided meanwhile: look again")
	case err != nil:
		fmt.Println(err)
	default:
		fmt.Println("recorded", rec.Key, "as", rec.Outcome, "- now delete the letter")
	}
}

// An operator's policy confines the tool to the consumers it names: a dynamodb:LeadingKeys
// condition of each consumer's prefixes followed by * (template.yaml's OperatorPolicy).
func ExampleKeyPrefixes() {
	for _, p := range operator.AdminKeyPrefixes("ledger") {
		fmt.Println(p + "*")
	}
	// Output:
	// ledger#*
	// #attempts#ledger#*
	// #hold#ledger#*
	// #discarded#ledger#*
}
