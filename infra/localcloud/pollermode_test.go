package localcloud

import (
	"io"
	"log/slog"
	"strings"
	"testing"
)

// templateCloud is a cloud of the project's template.yaml with its resources named but not
// created: enough to read its functions as Start does.
func templateCloud(t *testing.T, params map[string]string) *Cloud {
	t.Helper()
	tmpl, err := LoadTemplate("../../template.yaml")
	if err != nil {
		t.Fatal(err)
	}
	r := &refs{functions: map[string]bool{}, params: parameters(tmpl.Parameters, params), tables: map[string]Table{},
		queues: map[string]Queue{}, buckets: map[string]Bucket{}, prefix: "p", region: Region, account: Account, conds: conditions{decl: tmpl.Conditions}}
	c := &Cloud{log: slog.New(slog.NewTextHandler(io.Discard, nil)), tmpl: tmpl, refs: r, visibility: map[string]int{}}
	for _, id := range tmpl.Functions {
		r.functions[id] = true
	}
	for _, id := range tmpl.Tables {
		r.tables[id] = Table{Name: "p-" + id, ARN: "arn:table/p-" + id, StreamARN: "arn:table/p-" + id + "/stream/1"}
	}
	for _, id := range tmpl.Buckets {
		r.buckets[id] = Bucket{Name: "p-" + strings.ToLower(id), ARN: "arn:aws:s3:::p-" + strings.ToLower(id)}
	}
	for _, id := range tmpl.Queues {
		r.queues[id] = Queue{Name: "p-" + id, URL: "http://q/p-" + id, ARN: "arn:sqs:p-" + id}
		c.visibility[id] = 180
	}
	return c
}

func TestFunction_runs_the_SQS_mappings_in_the_mode_the_template_parameters_pick(t *testing.T) {
	cases := []struct {
		name                          string
		params                        map[string]string
		concurrency, minimum, maximum int
	}{
		{"default: on demand", nil, 5, 0, 0},
		{"provisioned", map[string]string{"ConsumerMinimumPollers": "2", "ConsumerMaximumPollers": "8"}, 0, 2, 8},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cloud := templateCloud(t, c.params)
			for _, id := range []string{"NoteTaggerFunction", "LedgerFunction", "NoteNotifierFunction"} {
				f, err := cloud.function(id)
				if err != nil {
					t.Fatal(err)
				}
				ev := f.Events[0]
				if ev.MaxConcurrency != c.concurrency || ev.MinPollers != c.minimum || ev.MaxPollers != c.maximum {
					t.Errorf("%s: MaximumConcurrency %d, pollers %d-%d; want %d, %d-%d", id, ev.MaxConcurrency,
						ev.MinPollers, ev.MaxPollers, c.concurrency, c.minimum, c.maximum)
				}
			}
		})
	}
}

func TestFunction_refuses_a_poller_count_Lambda_refuses(t *testing.T) {
	_, err := templateCloud(t, map[string]string{"ConsumerMinimumPollers": "1"}).function("LedgerFunction")
	if err == nil || !strings.Contains(err.Error(), "MinimumPollers 1: want 2 to 200") {
		t.Fatalf("ConsumerMinimumPollers=1: %v; want it refused, saying why", err)
	}
}
