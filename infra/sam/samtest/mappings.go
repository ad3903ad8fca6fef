package samtest

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
	"text/tabwriter"

	"github.com/onceflow/onceflow/infra/localcloud"
)

// Mapping is an event source mapping's settings, as a deploy creates it or the local cloud
// runs it.
type Mapping struct {
	Function, Source          string // logical ids
	BatchSize, BatchingWindow int
	MaxConcurrency            int
	MinPollers, MaxPollers    int
	ResponseTypes, Filters    string
	OnFailure                 string // logical id of the destination queue
	MaxRetries, MaxRecordAge  int
	Bisect                    bool
	StartingPosition          string
	Enabled                   bool
}

// TranslatedMappings reads the translation's AWS::Lambda::EventSourceMapping resources,
// AWS's defaults applied where a property is absent.
func TranslatedMappings(r *Resolver) []Mapping {
	var out []Mapping
	for _, res := range resourcesOfType(r.doc, "AWS::Lambda::EventSourceMapping") {
		raw := get(res, "Properties")
		p := asMap(r.Resolve(raw))
		m := Mapping{Function: fmt.Sprint(p["FunctionName"]), Source: refTarget(get(raw, "EventSourceArn")),
			BatchSize: num(p["BatchSize"]), BatchingWindow: num(p["MaximumBatchingWindowInSeconds"]),
			MaxConcurrency: num(get(p, "ScalingConfig", "MaximumConcurrency")),
			MinPollers:     num(get(p, "ProvisionedPollerConfig", "MinimumPollers")),
			MaxPollers:     num(get(p, "ProvisionedPollerConfig", "MaximumPollers")),
			ResponseTypes:  fmt.Sprint(asList(p["FunctionResponseTypes"])), Filters: patterns(get(p, "FilterCriteria", "Filters")),
			OnFailure:  refTarget(get(raw, "DestinationConfig", "OnFailure", "Destination")),
			MaxRetries: -1, MaxRecordAge: -1, Bisect: get(p, "BisectBatchOnFunctionError") == true,
			Enabled: get(p, "Enabled") != false}
		if v, ok := p["MaximumRetryAttempts"]; ok {
			m.MaxRetries = num(v)
		}
		if v, ok := p["MaximumRecordAgeInSeconds"]; ok {
			m.MaxRecordAge = num(v)
		}
		source, _ := get(raw, "EventSourceArn", "Fn::GetAtt").([]any)
		stream := len(source) == 2 && source[1] == "StreamArn"
		if stream {
			m.StartingPosition = fmt.Sprint(p["StartingPosition"])
		}
		if m.BatchSize == 0 {
			m.BatchSize = map[bool]int{true: 100, false: 10}[stream]
		}
		out = append(out, m)
	}
	return sortMappings(out)
}

// LocalMappings reads the event sources the local cloud polls. A mapping the template
// disables is not polled: it appears with Enabled false only in the translation.
func LocalMappings(c *localcloud.Cloud) []Mapping {
	queueID := map[string]string{}
	for id, q := range c.Endpoints().Queues {
		queueID[q.ARN] = id
	}
	var out []Mapping
	for id, f := range c.Functions() {
		for _, ev := range f.Events {
			if ev.Type != localcloud.EventSQS && ev.Type != localcloud.EventDynamoDB {
				continue
			}
			var filters []any
			b, _ := json.Marshal(ev.Filter)
			_ = json.Unmarshal(b, &filters)
			var pats []any
			for _, f := range filters {
				s, _ := json.Marshal(f)
				pats = append(pats, Doc{"Pattern": string(s)})
			}
			m := Mapping{Function: id, Source: ev.Source, BatchSize: ev.BatchSize, BatchingWindow: ev.BatchingWindow,
				MaxConcurrency: ev.MaxConcurrency, MinPollers: ev.MinPollers, MaxPollers: ev.MaxPollers,
				Filters: patterns(pats), OnFailure: queueID[ev.OnFailure], MaxRetries: ev.MaxRetries,
				MaxRecordAge: ev.MaxRecordAge, Bisect: ev.Bisect, ResponseTypes: "[]", Enabled: true}
			if ev.ReportFailures {
				m.ResponseTypes = "[ReportBatchItemFailures]"
			}
			if ev.Type == localcloud.EventDynamoDB {
				m.StartingPosition = ev.StartingPosition
			}
			out = append(out, m)
		}
	}
	return sortMappings(out)
}

// patterns writes filter patterns in one canonical form (JSON, keys sorted).
func patterns(filters any) string {
	var out []string
	for _, f := range asList(filters) {
		var v any
		if err := json.Unmarshal([]byte(fmt.Sprint(get(f, "Pattern"))), &v); err != nil {
			out = append(out, "unreadable: "+fmt.Sprint(get(f, "Pattern")))
			continue
		}
		b, _ := json.Marshal(v)
		out = append(out, string(b))
	}
	return strings.Join(out, " | ")
}

func sortMappings(ms []Mapping) []Mapping {
	slices.SortFunc(ms, func(a, b Mapping) int { return strings.Compare(a.Function+a.Source, b.Function+b.Source) })
	return ms
}

// CompareMappings fails t unless the local cloud polls exactly the translation's enabled
// mappings, with the same settings; it prints both side by side (on success with go test -v).
func CompareMappings(t testing.TB, r *Resolver, c *localcloud.Cloud) {
	t.Helper()
	var want []Mapping
	for _, m := range TranslatedMappings(r) {
		if m.Enabled {
			want = append(want, m)
		}
	}
	got := LocalMappings(c)
	if len(want) == 0 {
		t.Fatal("the translation has no enabled event source mappings")
	}
	if !reflect.DeepEqual(want, got) {
		t.Errorf("the local cloud's event source mappings differ from the translation's:\n%s", SideBySide(want, got))
		return
	}
	t.Logf("every event source mapping, the translation's beside the local cloud's:\n%s", SideBySide(want, got))
}

// SideBySide prints each mapping's fields, the translation's beside the local cloud's.
func SideBySide(want, got []Mapping) string {
	var b strings.Builder
	w := tabwriter.NewWriter(&b, 2, 4, 2, ' ', 0)
	typ := reflect.TypeFor[Mapping]()
	for i := range max(len(want), len(got)) {
		var tv, lv reflect.Value
		if i < len(want) {
			tv = reflect.ValueOf(want[i])
		}
		if i < len(got) {
			lv = reflect.ValueOf(got[i])
		}
		fmt.Fprintln(w, "field\ttranslation\tlocal cloud\t")
		for f := range typ.NumField() {
			a, l := "-", "-"
			if tv.IsValid() {
				a = fmt.Sprint(tv.Field(f))
			}
			if lv.IsValid() {
				l = fmt.Sprint(lv.Field(f))
			}
			mark := ""
			if a != l {
				mark = "<- differs"
			}
			fmt.Fprintf(w, "%s\t%s\t%s\t%s\n", typ.Field(f).Name, a, l, mark)
		}
		fmt.Fprintln(w, "\t\t\t")
	}
	w.Flush()
	return b.String()
}
