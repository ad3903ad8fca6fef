package metrics

import (
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"slices"
	"sync"
	"time"
)

// EMF is a Recorder that accumulates counts and millisecond observations until Flush writes
// them as one EMF line. It is safe for concurrent use. A nil *EMF records nothing.
type EMF struct {
	mu         sync.Mutex
	w          io.Writer
	namespace  string
	dimensions map[string]string
	counts     map[string]float64
	millis     map[string][]float64
	now        func() time.Time
}

// NewEMF returns an EMF recorder writing to w (os.Stdout in Lambda) under namespace, every
// metric carrying dimensions (for example {"Consumer": "orders"}).
func NewEMF(w io.Writer, namespace string, dimensions map[string]string) *EMF {
	return &EMF{w: w, namespace: namespace, dimensions: maps.Clone(dimensions),
		counts: map[string]float64{}, millis: map[string][]float64{}, now: time.Now}
}

// Count adds n to the counter name.
func (r *EMF) Count(name string, n float64) {
	if r == nil {
		return
	}
	r.mu.Lock()
	r.counts[name] += n
	r.mu.Unlock()
}

// Observe records a duration under name, in milliseconds.
func (r *EMF) Observe(name string, d time.Duration) {
	if r == nil {
		return
	}
	r.mu.Lock()
	r.millis[name] = append(r.millis[name], float64(d)/float64(time.Millisecond))
	r.mu.Unlock()
}

// Flush writes what was recorded since the last flush as one EMF line and resets the
// recorder. It writes nothing when nothing was recorded.
func (r *EMF) Flush() error {
	if r == nil {
		return nil
	}
	r.mu.Lock()
	counts, millis := r.counts, r.millis
	r.counts, r.millis = map[string]float64{}, map[string][]float64{}
	r.mu.Unlock()
	if len(counts) == 0 && len(millis) == 0 {
		return nil
	}
	type metricDef struct {
		Name string `json:"Name"`
		Unit string `json:"Unit"`
	}
	doc := map[string]any{}
	var defs []metricDef
	for _, name := range slices.Sorted(maps.Keys(counts)) {
		defs = append(defs, metricDef{name, "Count"})
		doc[name] = counts[name]
	}
	for _, name := range slices.Sorted(maps.Keys(millis)) {
		defs = append(defs, metricDef{name, "Milliseconds"})
		doc[name] = millis[name] // EMF accepts an array of values for one metric
	}
	dims := slices.Sorted(maps.Keys(r.dimensions))
	if dims == nil {
		dims = []string{} // one empty dimension set: the metrics without dimensions
	}
	for _, k := range dims {
		doc[k] = r.dimensions[k]
	}
	doc["_aws"] = map[string]any{
		"Timestamp": r.now().UnixMilli(),
		"CloudWatchMetrics": []map[string]any{{
			"Namespace":  r.namespace,
			"Dimensions": [][]string{dims},
			"Metrics":    defs,
		}},
	}
	line, err := json.Marshal(doc)
	if err != nil {
		return fmt.Errorf("encode metrics: %w", err)
	}
	if _, err := r.w.Write(append(line, '\n')); err != nil {
		return fmt.Errorf("write metrics: %w", err)
	}
	return nil
}
