package operator

import (
	"reflect"
	"testing"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"

	"github.com/onceflow/onceflow/pkg/internal/table"
)

// An operator's Record and the engine's are one item: every field of the one, set, is stored
// as the same attribute by the other, so that the operator decides on what the engine wrote.
func TestRecord_is_the_engines_record_attribute_for_attribute(t *testing.T) {
	var r Record
	v := reflect.ValueOf(&r).Elem()
	for i := range v.NumField() {
		switch f := v.Field(i); f.Kind() {
		case reflect.String:
			f.SetString(v.Type().Field(i).Name)
		case reflect.Int, reflect.Int64:
			f.SetInt(int64(i + 1))
		default:
			t.Fatalf("field %s of kind %s: set it here", v.Type().Field(i).Name, f.Kind())
		}
	}
	ours, err := attributevalue.MarshalMap(r)
	if err != nil {
		t.Fatal(err)
	}
	engines, err := attributevalue.MarshalMap(r.row())
	if err != nil {
		t.Fatal(err)
	}
	if len(ours) != v.NumField() || !reflect.DeepEqual(ours, engines) {
		t.Errorf("operator.Record stores %v\nthe engine's %v", ours, engines)
	}
	stored := 0
	for _, f := range reflect.VisibleFields(reflect.TypeFor[table.Record]()) {
		if f.IsExported() {
			stored++
		}
	}
	if stored != v.NumField() {
		t.Errorf("the engine's record has %d stored fields, operator.Record %d", stored, v.NumField())
	}
}
