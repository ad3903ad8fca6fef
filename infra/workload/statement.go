package workload

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	ddbtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/onceflow/onceflow/internal/ledger"
	"github.com/onceflow/onceflow/internal/statement"
	"github.com/onceflow/onceflow/pkg/idempotency"
	"github.com/onceflow/onceflow/pkg/operator"
)

// statements is what the app table holds of the accounts' statements (package statement),
// beside the ledger's entries and balances they must agree with.
type statements struct {
	lines    map[string][]statement.Line // by account, in sort key order
	moves    map[string]map[string]int64 // by account: applied movement's event id → signed amount
	balances map[string]int64            // by account
	heads    map[string]head             // by account
}

// head is an account's statement head (statement.HeadKey).
type head struct {
	PK      string `dynamodbav:"pk"`
	Last    string `dynamodbav:"last"`
	Balance int64  `dynamodbav:"balance"`
}

func readStatements(items []map[string]ddbtypes.AttributeValue) (statements, error) {
	s := statements{lines: map[string][]statement.Line{}, moves: map[string]map[string]int64{}, balances: map[string]int64{},
		heads: map[string]head{}}
	for _, it := range items {
		switch kindOf(it) {
		case "statement":
			var l statement.Line
			if err := attributevalue.UnmarshalMap(it, &l); err != nil {
				return s, fmt.Errorf("statement line: %w", err)
			}
			s.lines[l.AccountID] = append(s.lines[l.AccountID], l)
		case "statement-head":
			var h head
			if err := attributevalue.UnmarshalMap(it, &h); err != nil {
				return s, fmt.Errorf("statement head: %w", err)
			}
			s.heads[strings.TrimPrefix(h.PK, statement.PK(""))] = h
		case "entry":
			var e ledger.Entry
			if err := attributevalue.UnmarshalMap(it, &e); err != nil {
				return s, fmt.Errorf("entry: %w", err)
			}
			acct := strings.TrimPrefix(e.PK, ledger.PK(""))
			if s.moves[acct] == nil {
				s.moves[acct] = map[string]int64{}
			}
			s.moves[acct][e.EventID] = map[bool]int64{true: -e.Amount, false: e.Amount}[e.Type == "debit"]
		case "account":
			var a ledger.Account
			if err := attributevalue.UnmarshalMap(it, &a); err != nil {
				return s, fmt.Errorf("account: %w", err)
			}
			s.balances[a.ID] = a.Balance
		}
	}
	for _, ls := range s.lines {
		sort.Slice(ls, func(i, j int) bool { return ls[i].SK < ls[j].SK })
	}
	return s, nil
}

// statementProblems checks every account's statement against the ledger: one line per applied
// movement, none other, none twice; in the stream's order, each line's balance the previous
// one's plus its movement's amount, the last the account's balance, and the head naming the
// last line. No record of a stream consumer is rejected: the statement head's condition rejects
// a change applied after a later one (its line not written), so with every line there and none
// rejected, the statement was written in its account's order.
func (r *run) statementProblems(items []map[string]ddbtypes.AttributeValue, recs map[string]operator.Record) ([]string, string) {
	s, err := readStatements(items)
	if err != nil {
		return []string{err.Error()}, ""
	}
	var p []string
	lines := 0
	for _, acct := range sortedKeys(s.moves) {
		moves, seen, bal := s.moves[acct], map[string]bool{}, int64(0)
		for i, l := range s.lines[acct] {
			lines++
			delta, ok := moves[l.EventID]
			switch {
			case !ok:
				p = append(p, fmt.Sprintf("%s: line %d names %s, no applied movement of the account", acct, i, l.EventID))
			case seen[l.EventID]:
				p = append(p, fmt.Sprintf("%s: movement %s has two lines", acct, l.EventID))
			case l.Balance != bal+delta:
				p = append(p, fmt.Sprintf("%s: line %d (%s) says %d; want %d%+d, the previous line's and its movement's", acct, i, l.EventID, l.Balance, bal, delta))
			}
			seen[l.EventID], bal = true, l.Balance
		}
		ls, h := s.lines[acct], s.heads[acct]
		switch {
		case len(seen) != len(moves):
			p = append(p, fmt.Sprintf("%s: %d lines for %d applied movements", acct, len(seen), len(moves)))
		case bal != s.balances[acct]:
			p = append(p, fmt.Sprintf("%s: the statement ends at %d, the balance is %d", acct, bal, s.balances[acct]))
		case len(ls) > 0 && (h.Last != ls[len(ls)-1].SK || h.Balance != bal):
			p = append(p, fmt.Sprintf("%s: the head names %s at %d; the last line is %s at %d", acct, h.Last, h.Balance, ls[len(ls)-1].SK, bal))
		}
	}
	rejected := 0
	for k, rec := range recs {
		if r.streamRecord(k) && rec.Outcome == string(idempotency.Rejected) {
			rejected++
			if rejected <= 3 {
				p = append(p, fmt.Sprintf("record %s is %s (%s)", k, rec.Outcome, rec.Reason))
			}
		}
	}
	if rejected > 3 {
		p = append(p, fmt.Sprintf("%d stream records rejected", rejected))
	}
	for acct := range s.lines {
		if s.moves[acct] == nil {
			p = append(p, fmt.Sprintf("%s: a statement without applied movements", acct))
		}
	}
	sort.Strings(p)
	return p, fmt.Sprintf("%d lines for %d accounts: one per applied movement, in order, each balance the previous plus its amount, the head at the last; no stream record rejected", lines, len(s.moves))
}

// statementPending says how far the statements are behind the ledger ("" when not): the
// stream consumers finish after the ledger, so the drain waits for them too. It is asked once
// every ledger record is there, so an account's entries are final; it counts, per account not
// found complete yet, its entries and its statement's lines (two queries of its own items), and
// an account found complete stays so.
func (r *run) statementPending(ctx context.Context) (string, error) {
	if len(r.t.streams) == 0 {
		return "", nil
	}
	_, byAccount, err := r.ledgerMoves()
	if err != nil {
		return "", err
	}
	if r.stated == nil {
		r.stated = map[string]bool{}
	}
	behind := 0
	for _, acct := range sortedKeys(byAccount) {
		if r.stated[acct] {
			continue
		}
		entries, err := count(ctx, r.ddb, r.t.appTable, ledger.PK(acct), ledger.EntryPrefix)
		if err != nil {
			return "", err
		}
		lines, err := count(ctx, r.ddb, r.t.appTable, statement.PK(acct), statement.LinePrefix)
		if err != nil {
			return "", err
		}
		if lines >= entries {
			r.stated[acct] = true
		}
		behind += max(entries-lines, 0)
	}
	if behind == 0 {
		return "", nil
	}
	return fmt.Sprintf("the statements lack %d lines", behind), nil
}

// count is how many items of partition pk have a sort key starting with prefix, read
// consistently.
func count(ctx context.Context, ddb *dynamodb.Client, table, pk, prefix string) (int, error) {
	key, err := expression.NewBuilder().WithKeyCondition(expression.Key("pk").Equal(expression.Value(pk)).
		And(expression.Key("sk").BeginsWith(prefix))).Build()
	if err != nil {
		return 0, err
	}
	p := dynamodb.NewQueryPaginator(ddb, &dynamodb.QueryInput{TableName: aws.String(table), ConsistentRead: aws.Bool(true),
		Select: ddbtypes.SelectCount, KeyConditionExpression: key.KeyCondition(), ExpressionAttributeNames: key.Names(),
		ExpressionAttributeValues: key.Values()})
	n := 0
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return 0, fmt.Errorf("count %s %s*: %w", pk, prefix, err)
		}
		n += int(page.Count)
	}
	return n, nil
}
