package idempotency_test

import (
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/onceflow/onceflow/pkg/idempotency"
)

var k = map[string]types.AttributeValue{"pk": &types.AttributeValueMemberS{Value: "a"}}

func TestWrite_a_reused_builder_changes_nothing_in_a_write_already_made(t *testing.T) {
	stamp := expression.Set(expression.Name("updatedAt"), expression.Value("now"))
	w1 := idempotency.Update("t", k, stamp.Add(expression.Name("credits"), expression.Value(1)))
	_ = idempotency.Update("t", k, stamp.Add(expression.Name("debits"), expression.Value(1)))
	item, err := w1.TransactWriteItem()
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range item.Update.ExpressionAttributeNames {
		if name == "debits" {
			t.Fatalf("w1 = %s %v; the second write's ADD leaked into it", aws.ToString(item.Update.UpdateExpression), item.Update.ExpressionAttributeNames)
		}
	}
}

func TestWrite_If_on_Raw_is_refused(t *testing.T) {
	w := idempotency.Raw(types.TransactWriteItem{Delete: &types.Delete{TableName: aws.String("t"), Key: k}}).
		If(expression.AttributeExists(expression.Name("pk")))
	if _, err := w.TransactWriteItem(); err == nil || !strings.Contains(err.Error(), "Raw") {
		t.Fatalf("TransactWriteItem = %v; want the condition refused, never dropped", err)
	}
}

func TestWrite_conditions_and_update_keep_their_placeholders_apart(t *testing.T) {
	w := idempotency.Update("t", k, expression.Add(expression.Name("n"), expression.Value(1))).
		If(expression.Name("n").LessThan(expression.Value(10))).
		If(expression.Name("open").Equal(expression.Value(true)))
	item, err := w.TransactWriteItem()
	if err != nil {
		t.Fatal(err)
	}
	u := item.Update
	cond := aws.ToString(u.ConditionExpression)
	if cond != "(#c0x0 < :c0x0) AND (#c1x0 = :c1x0)" {
		t.Errorf("condition = %q", cond)
	}
	want := map[string]string{"#0": "n", "#c0x0": "n", "#c1x0": "open"}
	for p, name := range want {
		if u.ExpressionAttributeNames[p] != name {
			t.Errorf("names = %v; want %s = %s", u.ExpressionAttributeNames, p, name)
		}
	}
	if len(u.ExpressionAttributeValues) != 3 {
		t.Errorf("values = %v; want :0, :c0x0 and :c1x0", u.ExpressionAttributeValues)
	}
}
