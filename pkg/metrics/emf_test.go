package metrics_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/onceflow/onceflow/pkg/metrics"
)

func TestRecorder_flush_writes_one_EMF_line_and_resets(t *testing.T) {
	var out bytes.Buffer
	r := metrics.New(&out, "onceflow", map[string]string{"Consumer": "ledger"})
	var wg sync.WaitGroup
	for range 10 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r.Count(metrics.Applied, 1)
			r.Observe(metrics.CommitLatency, 5*time.Millisecond)
		}()
	}
	wg.Wait()
	r.Count(metrics.Rejected, 2)
	if err := r.Flush(); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		AWS struct {
			Timestamp         int64
			CloudWatchMetrics []struct {
				Namespace  string
				Dimensions [][]string
				Metrics    []struct{ Name, Unit string }
			}
		} `json:"_aws"`
		Consumer      string
		Applied       float64
		Rejected      float64
		CommitLatency []float64
	}
	line := strings.TrimSuffix(out.String(), "\n")
	if strings.Contains(line, "\n") {
		t.Fatalf("flush wrote more than one line: %q", out.String())
	}
	if err := json.Unmarshal([]byte(line), &doc); err != nil {
		t.Fatal(err)
	}
	cw := doc.AWS.CloudWatchMetrics
	if doc.AWS.Timestamp == 0 || len(cw) != 1 || cw[0].Namespace != "onceflow" || len(cw[0].Dimensions) != 1 || cw[0].Dimensions[0][0] != "Consumer" {
		t.Errorf("EMF metadata = %+v", doc.AWS)
	}
	units := map[string]string{}
	for _, m := range cw[0].Metrics {
		units[m.Name] = m.Unit
	}
	if units["Applied"] != "Count" || units["Rejected"] != "Count" || units["CommitLatency"] != "Milliseconds" {
		t.Errorf("metric definitions = %v", units)
	}
	if doc.Consumer != "ledger" || doc.Applied != 10 || doc.Rejected != 2 || len(doc.CommitLatency) != 10 || doc.CommitLatency[0] != 5 {
		t.Errorf("values = %+v", doc)
	}
	out.Reset()
	if err := r.Flush(); err != nil || out.Len() != 0 {
		t.Errorf("second flush wrote %q (%v), want nothing", out.String(), err)
	}
}

func TestRecorder_nil_records_nothing(t *testing.T) {
	var r *metrics.Recorder
	r.Count(metrics.Applied, 1)
	r.Observe(metrics.CommitLatency, time.Second)
	if err := r.Flush(); err != nil {
		t.Fatal(err)
	}
}
