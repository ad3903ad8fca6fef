package workload

import (
	"fmt"
	"strings"
	"time"
	"unicode/utf8"
)

// progressWidth is the terminal width a progress line keeps to; a longer one wraps its
// consumers onto indented continuation lines.
const progressWidth = 120

// progressLegend is printed once, before the first progress line.
const progressLegend = "progress: api requests done/total (HTTP attempts) · relay records · consumer queued/in flight/acked · calls DENIED by the gatekeeper (each shown once, as it happens)"

// progress is one progress report of a run.
type progress struct {
	elapsed                  time.Duration
	phase                    string
	done, total, http, relay int64
	faults                   int64 // faults injected so far
	chaos                    bool  // faults are injected: the line shows their count
	denied                   int64 // calls the gatekeeper refused so far: the line shows them when there are any
	consumers                []consumerProgress
}

// consumerProgress is a consumer queue's depth and its mapping's acknowledged messages.
type consumerProgress struct {
	name                    string
	queued, inFlight, acked int64
}

// line renders p in lines of at most progressWidth columns.
func (p progress) line() string {
	head := fmt.Sprintf("[%5.1fs] %-10s api %d/%d (%d) · relay %d", p.elapsed.Seconds(), p.phase, p.done, p.total, p.http, p.relay)
	if p.chaos {
		head += fmt.Sprintf(" · faults %d", p.faults)
	}
	if p.denied > 0 {
		head += fmt.Sprintf(" · DENIED %d", p.denied)
	}
	lines, cur := []string{}, head
	for _, c := range p.consumers {
		part := fmt.Sprintf(" · %s %d/%d/%d", c.name, c.queued, c.inFlight, c.acked)
		if utf8.RuneCountInString(cur+part) <= progressWidth {
			cur += part
			continue
		}
		lines = append(lines, cur)
		cur = strings.Repeat(" ", 10) + strings.TrimPrefix(part, " · ")
	}
	return strings.Join(append(lines, cur), "\n")
}
