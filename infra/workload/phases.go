package workload

import (
	"sync"
	"time"
)

// phases is the run's timeline: the phase it is in, read by the progress lines while the run
// moves on, and when each began.
type phases struct {
	mu     sync.Mutex
	names  []string
	starts []time.Time
}

// enter starts phase name now.
func (p *phases) enter(name string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.names = append(p.names, name)
	p.starts = append(p.starts, time.Now())
}

// current is the phase the run is in, "" before the first.
func (p *phases) current() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.names) == 0 {
		return ""
	}
	return p.names[len(p.names)-1]
}

// took is how long each phase took, the last one until now.
func (p *phases) took() []Phase {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make([]Phase, len(p.names))
	for i, name := range p.names {
		end := time.Now()
		if i+1 < len(p.starts) {
			end = p.starts[i+1]
		}
		out[i] = Phase{Name: name, Took: end.Sub(p.starts[i]).Round(100 * time.Millisecond)}
	}
	return out
}
