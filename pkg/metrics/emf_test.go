package metrics_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/onceflow/onceflow/pkg/metrics"
)

func TestRecorder_flush_writes_one_EMF_line_and_resets(t *testing.T) {
	var out bytes.Buffer
	r := metrics.NewEMF(&out, "onceflow", map[string]string{"Consumer": "ledger"})
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

func TestDiscard_and_Flush_of_a_recorder_that_does_not_buffer(t *testing.T) {
	metrics.Discard.Count(metrics.Applied, 1)
	metrics.Discard.Observe(metrics.CommitLatency, time.Millisecond)
	if err := metrics.Flush(metrics.Discard); err != nil {
		t.Fatalf("Flush(Discard) = %v; want nil", err)
	}
}

func TestFlush_flushes_a_recorder_that_buffers(t *testing.T) {
	var out bytes.Buffer
	r := metrics.NewEMF(&out, "ns", nil)
	r.Count(metrics.Applied, 1)
	if err := metrics.Flush(r); err != nil || !strings.Contains(out.String(), `"Applied":1`) {
		t.Fatalf("Flush(EMF) = %v, wrote %q; want the Applied count written", err, out.String())
	}
}

func ExampleEMF() {
	var out bytes.Buffer // os.Stdout in Lambda, where CloudWatch reads the line
	r := metrics.NewEMF(&out, "orders", map[string]string{"Consumer": "orders"})
	r.Count(metrics.Applied, 2)
	r.Observe(metrics.CommitLatency, 8*time.Millisecond)
	_ = r.Flush() // once per invocation; the engine's batch handlers do it

	var line map[string]any
	_ = json.Unmarshal(out.Bytes(), &line)
	fmt.Println(line["Consumer"], line["Applied"], line["CommitLatency"])
	// Output: orders 2 [8]
}

func TestEMF_without_dimensions_writes_one_empty_dimension_set(t *testing.T) {
	var out bytes.Buffer
	r := metrics.NewEMF(&out, "ns", nil)
	r.Count(metrics.Applied, 1)
	if err := r.Flush(); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), `"Dimensions":[[]]`) {
		t.Fatalf("EMF line %s; want Dimensions [[]], not [null]", out.String())
	}
}
