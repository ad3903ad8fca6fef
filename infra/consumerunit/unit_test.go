package consumerunit_test

import (
	"strings"
	"testing"

	"github.com/onceflow/onceflow/infra/consumerunit"
)

var orders = consumerunit.Consumer{Name: "orders", Types: []string{"order.placed"}}

func TestConsumer_ID_and_KeyPrefix_follow_its_name(t *testing.T) {
	c := consumerunit.Consumer{Name: "word-count"}
	if c.ID() != "WordCount" || c.KeyPrefix() != "WORD_COUNT" {
		t.Errorf("ID %q, KeyPrefix %q; want WordCount, WORD_COUNT", c.ID(), c.KeyPrefix())
	}
}

func TestAdd_refuses_a_consumer_whose_name_is_taken(t *testing.T) {
	tpl, err := consumerunit.Template(consumerunit.Project{Name: "shop", Consumers: []consumerunit.Consumer{orders}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := consumerunit.Add(tpl, orders); err == nil || !strings.Contains(err.Error(), "exists") {
		t.Errorf("Add of a second orders: %v; want an error saying it exists", err)
	}
	two, err := consumerunit.Add(tpl, consumerunit.Consumer{Name: "refunds", Types: []string{"order.refunded"}})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(two), "    Value: orders,refunds\n") {
		t.Error("ConsumerNames does not list orders,refunds")
	}
}

// Unsplice takes out exactly what Splice put in.
func TestUnsplice_reverses_Splice(t *testing.T) {
	one, err := consumerunit.Template(consumerunit.Project{Name: "shop", Consumers: []consumerunit.Consumer{orders}})
	if err != nil {
		t.Fatal(err)
	}
	refunds := consumerunit.Consumer{Name: "refunds", Types: []string{"order.refunded"}, HoldGroup: true}
	two, err := consumerunit.Add(one, refunds)
	if err != nil {
		t.Fatal(err)
	}
	back, err := consumerunit.Unsplice(two, refunds.Unit())
	if err != nil {
		t.Fatal(err)
	}
	if string(back) != string(one) {
		t.Errorf("Unsplice(Add(t)) differs from t:\n%s", back)
	}
}

func TestTemplate_refuses_what_it_cannot_render(t *testing.T) {
	for name, p := range map[string]consumerunit.Project{
		"no consumer":     {Name: "shop"},
		"a bad name":      {Name: "shop", Consumers: []consumerunit.Consumer{{Name: "Orders", Types: []string{"order.placed"}}}},
		"no event type":   {Name: "shop", Consumers: []consumerunit.Consumer{{Name: "orders"}}},
		"a bad code uri":  {Name: "shop", Consumers: []consumerunit.Consumer{{Name: "orders", Types: []string{"a.b"}, CodeUri: `a"b`}}},
		"a bad project":   {Name: "Shop", Consumers: []consumerunit.Consumer{orders}},
		"one name, twice": {Name: "shop", Consumers: []consumerunit.Consumer{orders, orders}},
	} {
		if _, err := consumerunit.Template(p); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

// A unit's alarms read right in any project: they name no file of this repository (an init
// project has no docs/) and put no article before the consumer's name ("A orders message").
func TestAlarms_hold_in_any_project(t *testing.T) {
	for _, a := range orders.Unit().Alarms() {
		if strings.Contains(a.Description, "docs/") || strings.Contains(a.Description, "A orders") {
			t.Errorf("alarm %s: %q names a file of this repository or reads %q", a.ID, a.Description, "A orders")
		}
	}
}
