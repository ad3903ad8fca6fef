package main

import (
	"flag"
	"io"
	"regexp"
	"strings"
	"testing"
)

// usageEntries maps each command of the usage text to its entry: its line and the lines that
// continue it (indented further).
func usageEntries(t *testing.T) map[string]string {
	t.Helper()
	entries := map[string]string{}
	start := regexp.MustCompile(`^  ([a-z][a-z-]*(?: [a-z]+)?)\s`)
	last := ""
	for _, line := range strings.Split(usage, "\n") {
		switch m := start.FindStringSubmatch(line); {
		case m != nil:
			name := strings.TrimSpace(m[1])
			if _, ok := commands()[name]; !ok {
				name = strings.Fields(name)[0] // a project command: one word
			}
			last = name
			entries[last] = line
		case last != "" && strings.HasPrefix(line, "    "):
			entries[last] += "\n" + line
		default:
			last = ""
		}
	}
	return entries
}

// saidAfter reports whether the text after the list says that command takes --flag: a sentence
// (or a clause of one) naming both, the command by its name or its first word.
func saidAfter(command, flag string) bool {
	_, tail, _ := strings.Cut(usage, "\n\n"+"A letter's ID")
	first := strings.Fields(command)[0]
	for _, clause := range regexp.MustCompile(`[.;]\s`).Split(tail, -1) {
		clause = strings.Join(strings.Fields(clause), " ")
		if !strings.Contains(clause, "--"+flag+" ") && !strings.Contains(clause, "--"+flag+",") {
			continue
		}
		if strings.Contains(clause, command) || regexp.MustCompile(`(^|[ ,])`+first+`[ ,]`).MatchString(clause) {
			return true
		}
	}
	return false
}

// TestOnceflow_usage_names_every_flag_of_every_command holds the usage text to the flags each
// command defines: a flag the text leaves out is one an operator never learns of, short of
// every subcommand's --help. The flags every subcommand takes (targetFlags) are said once, after
// the list.
func TestOnceflow_usage_names_every_flag_of_every_command(t *testing.T) {
	entries := usageEntries(t)
	common := flag.NewFlagSet("common", flag.ContinueOnError)
	var tf targetFlags
	tf.register(common)
	for name, cmd := range commands() {
		entry, ok := entries[name]
		if !ok {
			t.Errorf("the usage text has no entry for %q", name)
			continue
		}
		fs := flag.NewFlagSet(name, flag.ContinueOnError)
		fs.SetOutput(io.Discard)
		cmd.flags(fs)
		fs.VisitAll(func(f *flag.Flag) {
			if common.Lookup(f.Name) == nil && !strings.Contains(entry, "--"+f.Name) && !saidAfter(name, f.Name) {
				t.Errorf("%s: the usage text does not name --%s (%s)\n%s", name, f.Name, f.Usage, entry)
			}
		})
	}
}
