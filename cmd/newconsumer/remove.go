package main

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
)

// banner starts the template section make consumer writes for a consumer (resources.yaml.tmpl).
const banner = "  # ---------------------------------------------------------------- consumer "

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

// unsplice returns tpl without c's part: the reverse of splice. A piece edited since, so that
// it is no longer found as splice wrote it, is an error naming it.
func (c *consumer) unsplice(tpl string) (string, error) {
	start := strings.Index(tpl, banner+c.Name+"\n")
	if start < 0 {
		return "", fmt.Errorf("no section written by make consumer for %s (its banner %q): only a consumer make consumer wrote is removed this way",
			c.Name, strings.TrimSpace(banner+c.Name))
	}
	end := start + len(banner)
	if next := strings.Index(tpl[end:], "\n"+banner); next >= 0 {
		end += next + 1
	} else if next := strings.Index(tpl[end:], outputsStart); next >= 0 {
		end += next + 1
	} else {
		return "", errors.New("no Outputs: after the consumer's section")
	}
	s := strings.TrimRight(tpl[:start], "\n") + "\n\n" + tpl[end:]
	var problems []error
	cut := func(what string, re *regexp.Regexp) {
		if n := len(re.FindAllStringIndex(s, -1)); n != 1 {
			problems = append(problems, fmt.Errorf("%s: %d places match %s; want one (edited since make consumer wrote it?)", what, n, re))
			return
		}
		s = re.ReplaceAllString(s, "")
	}
	for _, in := range c.insertions() {
		if n := strings.Count(s, in.text+in.mark); n != 1 {
			problems = append(problems, fmt.Errorf("%s: found %d times above %q as make consumer wrote it; want once (edited since?)",
				in.what, n, strings.TrimSpace(in.mark)))
			continue
		}
		s = strings.Replace(s, in.text+in.mark, in.mark, 1)
	}
	id := regexp.QuoteMeta(c.ID)
	cut("its outputs", regexp.MustCompile(`(?m)^  `+id+`QueueUrl:\n    Value: !Ref `+id+`Queue\n  `+id+`DeadLetterQueueUrl:\n    Value: !Ref `+id+`DeadLetterQueue\n`))
	route := regexp.MustCompile(`,[A-Za-z0-9][A-Za-z0-9._-]*=\$\{` + id + `Queue\}`)
	for _, re := range []*regexp.Regexp{relayRoutes, outputRoutes} {
		m := re.FindStringSubmatch(s)
		if m == nil || !route.MatchString(m[2]) {
			problems = append(problems, fmt.Errorf("its routes: none to %sQueue in %s", c.ID, re))
			continue
		}
		s = strings.Replace(s, m[0], m[1]+route.ReplaceAllString(m[2], "")+m[3], 1)
	}
	if m := consumerList.FindStringSubmatch(s); m == nil || !strings.Contains(","+m[2]+",", ","+c.Name+",") {
		problems = append(problems, fmt.Errorf("its name: not in ConsumerNames"))
	} else {
		names := strings.Trim(strings.Replace(","+m[2]+",", ","+c.Name+",", ",", 1), ",")
		s = strings.Replace(s, m[0], m[1]+names, 1)
	}
	widgets, err := c.execute("widgets.json.tmpl")
	if err != nil {
		return "", err
	}
	if w := ",\n" + string(bytes.TrimRight(widgets, "\n")); strings.Count(s, w) != 1 {
		problems = append(problems, errors.New("its dashboard widgets: not found as make consumer wrote them"))
	} else {
		s = strings.Replace(s, w, "", 1)
	}
	return s, errors.Join(problems...)
}
