package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/onceflow/onceflow/infra/consumerunit"
)

// remove takes the consumer c (written by make consumer) out of root: its part of
// template.yaml, piece by piece as splice put it in, and its files (its package under
// internal/, its main under functions/, its sample events). Nothing is changed unless every
// piece was found; it returns what it removed.
func (c *consumer) remove(root string) ([]string, error) {
	path := filepath.Join(root, "template.yaml")
	tpl, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	out, err := c.unsplice(string(tpl))
	if err != nil {
		return nil, fmt.Errorf("template.yaml: %w", err)
	}
	dirs := []string{filepath.Join("internal", c.Pkg), filepath.Join("functions", c.Name)}
	for _, d := range dirs {
		if _, err := os.Stat(filepath.Join(root, d)); err != nil {
			return nil, fmt.Errorf("%s: %w", d, err)
		}
	}
	samples, _ := filepath.Glob(filepath.Join(root, "events", c.Name+"-*.json"))
	if err := os.WriteFile(path, []byte(out), 0o644); err != nil {
		return nil, err
	}
	removed := []string{"template.yaml: " + c.ID + "'s part"}
	for _, d := range dirs {
		if err := os.RemoveAll(filepath.Join(root, d)); err != nil {
			return removed, err
		}
		removed = append(removed, d+"/")
	}
	for _, s := range samples {
		if err := os.Remove(s); err != nil {
			return removed, err
		}
		rel, _ := filepath.Rel(root, s)
		removed = append(removed, rel)
	}
	return removed, nil
}

// unsplice returns tpl without c's part: the reverse of splice. Only a unit make consumer
// wrote (its note under the banner) is taken out; a piece edited since, so that it is no
// longer found as splice wrote it, is an error naming it.
func (c *consumer) unsplice(tpl string) (string, error) {
	if !strings.Contains(tpl, consumerunit.Banner+c.Name+"\n  # "+writtenBy+c.Name+" ") {
		return "", fmt.Errorf("no section written by make consumer for %s (its banner %q and the note %q): only a consumer make consumer wrote is removed this way",
			c.Name, strings.TrimSpace(consumerunit.Banner+c.Name), writtenBy+c.Name)
	}
	// The unit as it was written: its types from the note under its banner.
	note := regexp.MustCompile(regexp.QuoteMeta(consumerunit.Banner+c.Name+"\n  # "+writtenBy+c.Name+" TYPE=") + "([^`]*)`")
	if m := note.FindStringSubmatch(tpl); m != nil {
		c.Types = strings.Split(m[1], ",")
	}
	out, err := consumerunit.Unsplice([]byte(tpl), c.unit())
	s := string(out)
	problems := []error{err}
	if n := strings.Count(s, c.relayQueue()+markRelayQueues); n != 1 {
		problems = append(problems, fmt.Errorf("its queue in the relay's sqs:SendMessage list: found %d times as make consumer wrote it; want once (edited since?)", n))
	} else {
		s = strings.Replace(s, c.relayQueue()+markRelayQueues, markRelayQueues, 1)
	}
	route := regexp.MustCompile(`,[A-Za-z0-9][A-Za-z0-9._-]*=\$\{` + regexp.QuoteMeta(c.unit().QueueID) + `Queue\}`)
	for _, re := range []*regexp.Regexp{relayRoutes, outputRoutes} {
		m := re.FindStringSubmatch(s)
		if m == nil || !route.MatchString(m[2]) {
			problems = append(problems, fmt.Errorf("its routes: none to %sQueue in %s", c.ID, re))
			continue
		}
		s = strings.Replace(s, m[0], m[1]+route.ReplaceAllString(m[2], "")+m[3], 1)
	}
	return s, errors.Join(problems...)
}
