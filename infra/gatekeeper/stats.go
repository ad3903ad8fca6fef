package gatekeeper

import (
	"fmt"
	"maps"
	"sort"
	"strings"
	"sync"
	"time"
)

// Stats counts the calls the gatekeeper decided since it started. A call is one HTTP request;
// it is denied when any of the authorisations it needs is refused.
type Stats struct {
	Authorized int `json:"authorized"`
	Denied     int `json:"denied"`
	// ByPrincipal counts by principal name (a function's logical id, a managed policy's;
	// "unknown" for keys no principal has).
	ByPrincipal map[string]PrincipalStats `json:"byPrincipal,omitempty"`
	// Denials are the distinct refusals (principal, action, resource) in the order first seen,
	// at most maxDenials of them, each counted.
	Denials []Denial `json:"denials,omitempty"`
}

// PrincipalStats counts one principal's calls.
type PrincipalStats struct {
	Authorized int `json:"authorized"`
	Denied     int `json:"denied"`
}

// Denial is one distinct refusal: who was refused what on which resource, how often, the
// statement that came closest to allowing it (empty when no statement came near, and for an
// explicit Deny, which Why names), and why.
type Denial struct {
	Principal string    `json:"principal"`
	Action    string    `json:"action"`
	Resource  string    `json:"resource"`
	Count     int       `json:"count"`
	Closest   string    `json:"closest,omitempty"`
	Why       string    `json:"why,omitempty"`
	At        time.Time `json:"at"` // when it was first refused
}

func (d Denial) String() string {
	s := fmt.Sprintf("%s was refused %s on %s", d.Principal, d.Action, d.Resource)
	if d.Count > 1 {
		s += fmt.Sprintf(" (%d times)", d.Count)
	}
	return s
}

// Explain is the refusal and why: the statement that came closest to allowing it (the nearest
// Allow), and what of it did not match; or that no statement came near.
func (d Denial) Explain() string {
	s := d.String()
	switch {
	case d.Closest != "":
		s += "; the closest statement, " + d.Closest + ", does not allow it: " + d.Why
	case d.Why != "":
		s += ": " + d.Why
	default:
		s += ": no statement of its role allows any action of the service"
	}
	return s
}

// Summary is the gatekeeper's line for a run's summary: calls authorised and denied, and who
// was denied what.
func (s Stats) Summary() string {
	line := fmt.Sprintf("gatekeeper: %d calls authorised, %d denied", s.Authorized, s.Denied)
	if s.Denied == 0 {
		return line
	}
	var who []string
	for _, name := range sortedKeys(s.ByPrincipal) {
		if n := s.ByPrincipal[name].Denied; n > 0 {
			who = append(who, fmt.Sprintf("%s %d", name, n))
		}
	}
	var what []string
	for _, d := range s.Denials {
		what = append(what, d.String())
	}
	return line + " (" + strings.Join(who, ", ") + "): " + strings.Join(what, "; ")
}

const maxDenials = 100

type counters struct {
	mu sync.Mutex
	s  Stats
}

func (c *counters) count(principal string, denial *Denial) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.s.ByPrincipal == nil {
		c.s.ByPrincipal = map[string]PrincipalStats{}
	}
	p := c.s.ByPrincipal[principal]
	defer func() { c.s.ByPrincipal[principal] = p }()
	if denial == nil {
		c.s.Authorized++
		p.Authorized++
		return
	}
	c.s.Denied++
	p.Denied++
	for i, d := range c.s.Denials {
		if d.Principal == denial.Principal && d.Action == denial.Action && d.Resource == denial.Resource {
			c.s.Denials[i].Count++
			return
		}
	}
	if len(c.s.Denials) < maxDenials {
		d := *denial
		d.Count, d.At = 1, time.Now()
		c.s.Denials = append(c.s.Denials, d)
	}
}

// recount turns a call counted authorised into one denied (an answer the emulator gave that
// AWS refuses).
func (c *counters) recount(principal string, denial *Denial) {
	c.mu.Lock()
	c.s.Authorized--
	p := c.s.ByPrincipal[principal]
	p.Authorized--
	c.s.ByPrincipal[principal] = p
	c.mu.Unlock()
	c.count(principal, denial)
}

func (c *counters) snapshot() Stats {
	c.mu.Lock()
	defer c.mu.Unlock()
	s := c.s
	s.ByPrincipal = maps.Clone(c.s.ByPrincipal)
	s.Denials = append([]Denial(nil), c.s.Denials...)
	return s
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
