package onceflow_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/onceflow/onceflow/infra/iam"
	"github.com/onceflow/onceflow/internal/api"
	"github.com/onceflow/onceflow/internal/ledger"
	"github.com/onceflow/onceflow/internal/notes"
	"github.com/onceflow/onceflow/internal/statement"
	"github.com/onceflow/onceflow/pkg/cloudevent"
	"github.com/onceflow/onceflow/pkg/dynamodbbatch"
	"github.com/onceflow/onceflow/pkg/idempotency"
	"github.com/onceflow/onceflow/pkg/operator"
	"github.com/onceflow/onceflow/pkg/outbox"
)

// keyedActions are the DynamoDB actions that name the partition keys they touch, so that a
// dynamodb:LeadingKeys condition limits them. A Scan or a BatchGetItem of no key would pass a
// ForAllValues condition vacuously: no function may be granted anything else on a table.
var keyedActions = []string{"dynamodb:GetItem", "dynamodb:PutItem", "dynamodb:UpdateItem",
	"dynamodb:DeleteItem", "dynamodb:ConditionCheckItem", "dynamodb:Query"}

// grant is one Allow statement of a function's policies, as far as DynamoDB tables go.
type grant struct {
	actions   []string
	resources []string // "AppTable.Arn", "AppTable.StreamArn", ...
	patterns  []string // the dynamodb:LeadingKeys patterns; nil when unconditional
	problems  []string // what the evaluator below cannot read: the test fails on any
}

// streamActions are the DynamoDB actions on a table's stream: they read no item of a table.
var streamActions = []string{"dynamodb:DescribeStream", "dynamodb:GetRecords", "dynamodb:GetShardIterator", "dynamodb:ListStreams"}

// grants reads the statements of the role translated function fn deploys with (inline and
// managed policies), resolving Fn::FindInMap from the template's Mappings.
func grants(t *testing.T, tpl doc, fn string) []grant {
	t.Helper()
	var out []grant
	for _, st := range allStatements(t, tpl, fn) {
		g := grant{}
		if !slices.ContainsFunc(asList(get(st, "Action")), func(a any) bool { return strings.HasPrefix(fmt.Sprint(a), "dynamodb:") }) {
			continue // not about tables
		}
		if get(st, "Effect") != "Allow" {
			g.problems = append(g.problems, fmt.Sprintf("Effect %v: only Allow statements are expected", get(st, "Effect")))
		}
		for _, a := range asList(get(st, "Action")) {
			g.actions = append(g.actions, fmt.Sprint(a))
		}
		for _, r := range asList(get(st, "Resource")) {
			if r == "*" {
				g.resources = append(g.resources, "*")
				continue
			}
			l, _ := get(r, "Fn::GetAtt").([]any)
			if len(l) != 2 {
				g.problems = append(g.problems, fmt.Sprintf("resource %v is not a !GetAtt of a resource", r))
				continue
			}
			g.resources = append(g.resources, fmt.Sprint(l[0], ".", l[1]))
		}
		g.readCondition(tpl, get(st, "Condition"))
		out = append(out, g)
	}
	return out
}

func (g *grant) readCondition(tpl doc, cond any) {
	if cond == nil {
		return
	}
	for op, keys := range cond.(doc) {
		if op != "ForAllValues:StringLike" {
			g.problems = append(g.problems, "condition operator "+op+": want ForAllValues:StringLike")
			continue
		}
		for key, v := range keys.(doc) {
			if key != "dynamodb:LeadingKeys" {
				g.problems = append(g.problems, "condition key "+key+": only dynamodb:LeadingKeys is evaluated here")
				continue
			}
			if m, ok := get(v, "Fn::FindInMap").([]any); ok && len(m) == 3 {
				v = get(tpl, "Mappings", fmt.Sprint(m[0]), fmt.Sprint(m[1]), fmt.Sprint(m[2]))
			}
			g.patterns = []string{}
			for _, p := range asList(v) {
				g.patterns = append(g.patterns, fmt.Sprint(p))
			}
		}
	}
}

func asList(v any) []any {
	if l, ok := v.([]any); ok {
		return l
	}
	if v == nil {
		return nil
	}
	return []any{v}
}

// allows reports whether function fn's policies allow action on table's item of partition key
// pk, as IAM would for these statement shapes (Allow only; ForAllValues over the one leading
// key a single-item action or a Query names).
func allows(gs []grant, action, table, pk string) bool {
	for _, g := range gs {
		if !slices.Contains(g.actions, action) || !slices.Contains(g.resources, table+".Arn") && !slices.Contains(g.resources, "*") {
			continue
		}
		if g.patterns == nil || slices.ContainsFunc(g.patterns, func(p string) bool { return iam.Like(p, pk) }) {
			return true
		}
	}
	return false
}

func TestTemplate_table_grants_are_keyed_actions_under_a_leading_keys_condition(t *testing.T) {
	tpl := translated(t)
	tables := resourcesOfType(tpl, "AWS::DynamoDB::Table")
	for id := range resourcesOfType(tpl, "AWS::Lambda::Function") {
		for i, g := range grants(t, tpl, id) {
			for _, p := range g.problems {
				t.Errorf("%s statement %d: %s", id, i, p)
			}
			if slices.Contains(g.resources, "*") {
				for _, a := range g.actions {
					if strings.HasPrefix(a, "dynamodb:") && !slices.Contains(streamActions, a) {
						t.Errorf("%s statement %d grants %s on every resource: only stream reads %v may be", id, i, a, streamActions)
					}
				}
				continue
			}
			onTable := slices.ContainsFunc(g.resources, func(r string) bool {
				name, attr, _ := strings.Cut(r, ".")
				return tables[name] != nil && attr == "Arn"
			})
			if !onTable {
				continue
			}
			for _, a := range g.actions {
				if !slices.Contains(keyedActions, a) {
					t.Errorf("%s statement %d grants %s on a table: only %v, which name their keys", id, i, a, keyedActions)
				}
			}
			if len(g.patterns) == 0 {
				t.Errorf("%s statement %d grants %v on %v with no dynamodb:LeadingKeys patterns", id, i, g.actions, g.resources)
			}
			for _, p := range g.patterns {
				if !strings.HasSuffix(p, "#*") || strings.Count(p, "*") != 1 {
					t.Errorf("%s statement %d: leading key pattern %q; want a fixed prefix ending in #*", id, i, p)
				}
			}
		}
	}
}

// access is one DynamoDB action on one item, as the code makes it.
type access struct {
	action, table, pk string
}

// writes turns transaction writes into the item actions IAM authorises them as.
func writes(t *testing.T, items []types.TransactWriteItem) []access {
	t.Helper()
	var out []access
	for _, w := range items {
		var a access
		var key map[string]types.AttributeValue
		switch {
		case w.Put != nil:
			a, key = access{"dynamodb:PutItem", aws.ToString(w.Put.TableName), ""}, w.Put.Item
		case w.Update != nil:
			a, key = access{"dynamodb:UpdateItem", aws.ToString(w.Update.TableName), ""}, w.Update.Key
		case w.Delete != nil:
			a, key = access{"dynamodb:DeleteItem", aws.ToString(w.Delete.TableName), ""}, w.Delete.Key
		case w.ConditionCheck != nil:
			a, key = access{"dynamodb:ConditionCheckItem", aws.ToString(w.ConditionCheck.TableName), ""}, w.ConditionCheck.Key
		}
		a.pk = pkOf(t, key)
		out = append(out, a)
	}
	return out
}

func pkOf(t *testing.T, item map[string]types.AttributeValue) string {
	t.Helper()
	pk, ok := item["pk"].(*types.AttributeValueMemberS)
	if !ok {
		t.Fatalf("item %v has no string pk", item)
	}
	return pk.Value
}

func effectWrites(t *testing.T, eff idempotency.Effect, err error) []access {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
	items, err := eff.TransactWriteItems()
	if err != nil {
		t.Fatal(err)
	}
	return writes(t, items)
}

func each(actions []string, table, pk string) []access {
	var out []access
	for _, a := range actions {
		out = append(out, access{a, table, pk})
	}
	return out
}

// consumerName is the CONSUMER_NAME the template gives function fn: its idempotency keys'
// prefix.
func consumerName(t *testing.T, tpl doc, fn string) string {
	t.Helper()
	name, ok := get(tpl, "Resources", fn, "Properties", "Environment", "Variables", "CONSUMER_NAME").(string)
	if !ok || name == "" {
		t.Fatalf("%s sets no literal CONSUMER_NAME", fn)
	}
	return name
}

// TestTemplate_policies_allow_the_writes_the_code_makes_and_refuse_the_others evaluates each
// function's statements against the items the code really touches, keyed by the code's own
// key functions and effects (tables named by their logical ids), and against the items the
// function must not touch.
func TestTemplate_policies_allow_the_writes_the_code_makes_and_refuse_the_others(t *testing.T) {
	tpl := translated(t)
	now := time.Date(2026, 11, 30, 6, 0, 0, 0, time.UTC)
	const app, idem = "AppTable", "IdempotencyTable"
	credit, err := ledger.NewEvent(ledger.Credited, "acc-1", "ref-1", 100, now)
	if err != nil {
		t.Fatal(err)
	}
	var movement ledger.MovementData
	if err := cloudevent.DecodeData(credit, &movement); err != nil {
		t.Fatal(err)
	}
	noteWrites, _, err := notes.Create(app, "note-1", "Lisbon #travel", "tapas #food", now)
	if err != nil {
		t.Fatal(err)
	}
	created, err := cloudevent.New(notes.CreatedEventID("note-1"), notes.Source, notes.Created, "note-1", now,
		notes.CreatedData{NoteID: "note-1", Title: "Lisbon #travel", Content: "tapas #food"})
	if err != nil {
		t.Fatal(err)
	}
	movementOutbox, err := outbox.Put(app, credit, now)
	if err != nil {
		t.Fatal(err)
	}
	movementItem, err := ledger.WriteMovement(app, credit, "ref-1", 100)
	if err != nil {
		t.Fatal(err)
	}
	movementPK := pkOf(t, ledger.MovementKey(credit.ID))
	// every item of function fn in the idempotency table: a sample key under each prefix
	items := func(fn string, actions []string) []access {
		var out []access
		for _, p := range operator.KeyPrefixes(consumerName(t, tpl, fn)) {
			out = append(out, each(actions, idem, p+"ev-1")...)
		}
		return out
	}
	otherRecord := operator.Key("some-other-consumer", "ev-1")
	// the hold of a consumer's group, under the engine's hold prefix
	hold := func(fn, group string) string {
		for _, p := range operator.KeyPrefixes(consumerName(t, tpl, fn)) {
			if strings.HasPrefix(p, "#hold#") {
				return p + group
			}
		}
		t.Fatalf("no hold prefix among %v", operator.KeyPrefixes(consumerName(t, tpl, fn)))
		return ""
	}
	if api := get(tpl, "Resources", "ApiFunction", "Properties", "Environment", "Variables", "LEDGER_CONSUMER_NAME"); api != consumerName(t, tpl, "LedgerFunction") {
		t.Errorf("ApiFunction's LEDGER_CONSUMER_NAME %v; want the LedgerFunction's CONSUMER_NAME", api)
	}
	ledgerRecord := operator.Key(consumerName(t, tpl, "LedgerFunction"), "ev-1")
	outboxPK := pkOf(t, movementOutbox.Put.Item)
	notePK, tagPK, accountPK := pkOf(t, notes.Key("note-1")), pkOf(t, notes.TagKey("travel")), pkOf(t, ledger.AccountKey("acc-1"))
	reads := []string{"dynamodb:GetItem", "dynamodb:Query"}
	// records; failure counts, each in a transaction with a ConditionCheck of the event's record
	// (taggerRecordCheck)
	recordWrites := []string{"dynamodb:PutItem", "dynamodb:GetItem", "dynamodb:UpdateItem"}
	taggerRecordCheck := access{"dynamodb:ConditionCheckItem", idem, operator.Key(consumerName(t, tpl, "NoteTaggerFunction"), "ev-1")}
	leaseWrites := []string{"dynamodb:PutItem", "dynamodb:GetItem", "dynamodb:UpdateItem", "dynamodb:DeleteItem", "dynamodb:ConditionCheckItem"}
	tagEffect, tagErr := notes.TagEffect(app, created, notes.CreatedData{NoteID: "note-1", Title: "Lisbon #travel"})
	creditEffect, creditErr := ledger.Credit(app, credit, movement)
	line := statement.Line{PK: statement.PK("acc-1"), SK: statement.LinePrefix + "1", Kind: "statement", AccountID: "acc-1", EventID: "ev-1", Balance: 1}
	debitEffect, debitErr := ledger.Debit(app, credit, movement)
	// The commits as the engine sends them, the consumers' own group policies included: under
	// HoldGroup the ledger's transaction checks its account's hold (ConditionCheckItem).
	ledgerCommit := engineCommit(t, consumerName(t, tpl, "LedgerFunction"), ledger.Handler(app), idempotency.HoldGroup, credit)
	taggerCommit := engineCommit(t, consumerName(t, tpl, "NoteTaggerFunction"), notes.Tagger(app), idempotency.GoOn, created)
	allowed := map[string][]access{
		"ApiFunction": slices.Concat(writes(t, noteWrites), writes(t, []types.TransactWriteItem{movementItem, movementOutbox}),
			[]access{{"dynamodb:PutItem", app, api.RequestPK("user-1", "key-1")}},
			// a pending movement's status reads its account's hold (GET /accounts/{id}/movements/…)
			[]access{{"dynamodb:GetItem", idem, hold("LedgerFunction", "acc-1")}},
			each(reads, app, notePK), each(reads, app, tagPK), each(reads, app, accountPK), each(reads, app, movementPK)),
		"NoteTaggerFunction": slices.Concat(effectWrites(t, tagEffect, tagErr), items("NoteTaggerFunction", recordWrites), taggerCommit,
			[]access{taggerRecordCheck}),
		"LedgerFunction": slices.Concat(effectWrites(t, creditEffect, creditErr), effectWrites(t, debitEffect, debitErr),
			items("LedgerFunction", leaseWrites), // DeleteItem: a group hold's release
			// a commit checks its account's hold; a count and a hold's write check the event's record
			ledgerCommit, []access{{"dynamodb:ConditionCheckItem", idem, hold("LedgerFunction", "acc-1")},
				{"dynamodb:ConditionCheckItem", idem, ledgerRecord}}),
		"NoteNotifierFunction": items("NoteNotifierFunction", leaseWrites),
		// a line and its account's head; its records, counts and the account keys' holds
		"StatementFunction": slices.Concat(effectWrites(t, statement.Effect(app, line), nil), items("StatementFunction", leaseWrites),
			// the commit as the engine sends it: the line, the head, the record, the key's hold
			engineCommit(t, consumerName(t, tpl, "StatementFunction"), statement.Handler(app), idempotency.HoldGroup, accountChange(t))),
	}
	refused := map[string][]access{
		"ApiFunction": slices.Concat(each([]string{"dynamodb:PutItem", "dynamodb:UpdateItem"}, app, accountPK),
			each([]string{"dynamodb:UpdateItem", "dynamodb:DeleteItem"}, app, notePK), each(reads, app, outboxPK),
			// the ledger decides a movement, not the API
			each([]string{"dynamodb:UpdateItem"}, app, movementPK),
			// a replayed request's answer comes from its failed put (ALL_OLD), never a read
			each(reads, app, api.RequestPK("user-1", "key-1")),
			// the ledger's holds are read, never written; nothing else of the idempotency table
			each([]string{"dynamodb:PutItem", "dynamodb:UpdateItem", "dynamodb:DeleteItem", "dynamodb:Query"}, idem, hold("LedgerFunction", "acc-1")),
			each([]string{"dynamodb:GetItem"}, idem, hold("NoteTaggerFunction", "acc-1")),
			each([]string{"dynamodb:GetItem"}, idem, ledgerRecord),
			each([]string{"dynamodb:GetItem"}, app, hold("LedgerFunction", "acc-1")),
			each(recordWrites, idem, ledgerRecord)),
		"NoteTaggerFunction": slices.Concat(each([]string{"dynamodb:PutItem"}, app, outboxPK),
			// GoOn: its commits check no hold, and it is granted none; nor a check of its counts
			each([]string{"dynamodb:ConditionCheckItem"}, idem, hold("NoteTaggerFunction", "note-1")),
			each([]string{"dynamodb:ConditionCheckItem"}, idem, "#attempts#"+taggerRecordCheck.pk),
			each([]string{"dynamodb:UpdateItem", "dynamodb:PutItem"}, app, accountPK),
			each([]string{"dynamodb:UpdateItem", "dynamodb:PutItem"}, app, movementPK),
			items("LedgerFunction", leaseWrites), each(leaseWrites, idem, otherRecord)),
		"LedgerFunction": slices.Concat(each([]string{"dynamodb:PutItem"}, app, outboxPK),
			each([]string{"dynamodb:UpdateItem", "dynamodb:PutItem"}, app, notePK),
			items("NoteTaggerFunction", leaseWrites), items("NoteNotifierFunction", leaseWrites),
			// no check on the app table's accounts but through its effects' own writes
			each([]string{"dynamodb:ConditionCheckItem"}, app, accountPK)),
		"NoteNotifierFunction": slices.Concat(items("LedgerFunction", leaseWrites), each(leaseWrites, idem, otherRecord),
			each(leaseWrites, app, notePK), each(leaseWrites, app, outboxPK)),
		"OutboxRelayFunction": slices.Concat(each(leaseWrites, app, outboxPK), each(leaseWrites, idem, ledgerRecord)),
		// it reads the ledger's accounts from the stream, and writes only its statements
		"StatementFunction": slices.Concat(each([]string{"dynamodb:PutItem", "dynamodb:UpdateItem", "dynamodb:GetItem"}, app, accountPK),
			each(leaseWrites, app, outboxPK), each(leaseWrites, app, notePK), each(leaseWrites, app, movementPK),
			items("LedgerFunction", leaseWrites), each(leaseWrites, idem, otherRecord)),
	}
	for fn, accesses := range allowed {
		gs := grants(t, tpl, fn)
		for _, a := range accesses {
			if !allows(gs, a.action, a.table, a.pk) {
				t.Errorf("%s may not %s %s item %q, which its code does", fn, a.action, a.table, a.pk)
			}
		}
	}
	for fn, accesses := range refused {
		gs := grants(t, tpl, fn)
		for _, a := range accesses {
			if allows(gs, a.action, a.table, a.pk) {
				t.Errorf("%s may %s %s item %q, outside its own items", fn, a.action, a.table, a.pk)
			}
		}
	}
}

// accountChange is a change of account acc-1's item as the statement consumer decodes it from
// the app table's stream (dynamodbbatch.ChangeEvent).
func accountChange(t *testing.T) cloudevent.Event {
	t.Helper()
	img := map[string]events.DynamoDBAttributeValue{"pk": events.NewStringAttribute("ACCOUNT#acc-1"), "sk": events.NewStringAttribute("ACCOUNT"),
		"kind": events.NewStringAttribute("account"), "id": events.NewStringAttribute("acc-1"), "balance": events.NewNumberAttribute("5"),
		"lastEvent": events.NewStringAttribute("mv-1")}
	ev, err := dynamodbbatch.ChangeEvent(context.Background(), events.DynamoDBEventRecord{EventID: "rec-1", EventName: "MODIFY",
		Change: events.DynamoDBStreamRecord{Keys: map[string]events.DynamoDBAttributeValue{"pk": img["pk"], "sk": img["sk"]}, NewImage: img, SequenceNumber: "7"}})
	if err != nil {
		t.Fatal(err)
	}
	return ev
}
