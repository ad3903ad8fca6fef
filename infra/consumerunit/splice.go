package consumerunit

import (
	"errors"
	"fmt"
	"regexp"
	"strings"

	"github.com/onceflow/onceflow/pkg/operator"
)

// Banner starts a unit's section of a template's Resources; the consumer's name follows it.
const Banner = "  # ---------------------------------------------------------------- consumer "

// The marker lines of a template a unit's lines go right above. CloudFormation has no loop
// that the local cloud, the SAM translator and cfn-lint all read, so a unit is written out,
// each piece where it belongs.
const (
	MarkLeadingKeys   = "    # consumer unit: a consumer's LeadingKeys above this line\n"
	MarkOperatorDLQs  = "              # consumer unit: a consumer's dead-letter queue for the operator above this line\n"
	MarkOperatorQueue = "              # consumer unit: a consumer's queue for the operator above this line\n"
	MarkOperatorKeys  = "                  # consumer unit: a consumer's keys for the operator above this line\n"
	outputsStart      = "\nOutputs:\n"
	// DashboardEnd ends the widgets of a template's dashboard (its DashboardBody's !Sub), where
	// a unit's widgets go when the template has one.
	DashboardEnd = "\n          ]}\n"
)

// consumerNames is the ConsumerNames output, whose value lists the consumers' names.
var consumerNames = regexp.MustCompile(`(?m)^(  ConsumerNames:\n(?:    .*\n)*?    Value: )(.*)$`)

// Insertion is text of a unit that goes right above a marker line of the template.
type Insertion struct{ What, Mark, Text string }

// Insertions are the unit's lines above the template's markers: its LeadingKeys, and its
// dead-letter queue, queue and keys in the operator's policy.
func (u Unit) Insertions() []Insertion {
	var records []string
	for _, p := range operator.KeyPrefixes(u.Name) {
		records = append(records, fmt.Sprintf("%q", p+"*"))
	}
	keys := fmt.Sprintf("    %sFunction:\n", u.ID)
	if len(u.Writes) > 0 {
		var writes []string
		for _, w := range u.Writes {
			writes = append(writes, fmt.Sprintf("%q", w))
		}
		keys += "      Writes: [" + strings.Join(writes, ", ") + "]\n"
	}
	keys += "      Records: [" + strings.Join(records, ", ") + "]\n"
	var admin string
	for _, p := range operator.AdminKeyPrefixes(u.Name) {
		admin += fmt.Sprintf("                  - %q\n", p+"*")
	}
	return []Insertion{
		{"its LeadingKeys", MarkLeadingKeys, keys},
		{"its dead-letter queue in the operator's policy", MarkOperatorDLQs, "              - !GetAtt " + u.QueueID + "DeadLetterQueue.Arn\n"},
		{"its queue in the operator's policy", MarkOperatorQueue, "              - !GetAtt " + u.QueueID + "Queue.Arn\n"},
		{"its keys in the operator's policy", MarkOperatorKeys, admin},
	}
}

// Splice returns tpl with the unit in it: its resources in a section of their own at the end
// of Resources, its lines above the template's markers, its name in the ConsumerNames output,
// its widgets at the end of the dashboard (if tpl has one) and its outputs at the end. It refuses a unit whose function, queue or name is taken.
func Splice(tpl []byte, u Unit) ([]byte, error) {
	resources, err := u.Resources()
	if err != nil {
		return nil, err
	}
	s := string(tpl)
	for _, id := range []string{u.ID + "Function", u.QueueID + "Queue", u.QueueID + "DeadLetterQueue"} {
		if strings.Contains(s, "\n  "+id+":\n") {
			return nil, fmt.Errorf("%s exists: choose another name", id)
		}
	}
	if strings.Contains(s, Banner+u.Name+"\n") {
		return nil, fmt.Errorf("consumer %s exists: choose another name", u.Name)
	}
	if n := strings.Count(s, outputsStart); n != 1 {
		return nil, fmt.Errorf("%d places %q; want one", n, strings.TrimSpace(outputsStart))
	}
	for _, in := range u.Insertions() {
		if n := strings.Count(s, in.Mark); n != 1 {
			return nil, fmt.Errorf("%d places %q; want one", n, strings.TrimSpace(in.Mark))
		}
		s = strings.Replace(s, in.Mark, in.Text+in.Mark, 1)
	}
	m := consumerNames.FindAllStringSubmatch(s, -1)
	if len(m) != 1 {
		return nil, fmt.Errorf("%d places %s; want one", len(m), consumerNames)
	}
	names := strings.Split(m[0][2], ",")
	if m[0][2] == `""` {
		names = nil
	}
	for _, n := range names {
		if n == u.Name {
			return nil, fmt.Errorf("consumer %s exists (ConsumerNames): choose another name", u.Name)
		}
	}
	s = strings.Replace(s, m[0][0], m[0][1]+strings.Join(append(names, u.Name), ","), 1)
	if strings.Contains(s, DashboardEnd) {
		widgets, err := u.Widgets()
		if err != nil {
			return nil, err
		}
		if n := strings.Count(s, DashboardEnd); n != 1 {
			return nil, fmt.Errorf("%d places %q; want one", n, strings.TrimSpace(DashboardEnd))
		}
		s = strings.Replace(s, DashboardEnd, ",\n"+widgets+DashboardEnd, 1)
	}
	s = strings.Replace(s, outputsStart, "\n"+strings.TrimRight(string(resources), "\n")+"\n"+outputsStart, 1)
	return []byte(strings.TrimRight(s, "\n") + "\n" + u.Outputs()), nil
}

// Unsplice returns tpl without the unit: the reverse of Splice. A piece edited since, so that
// it is no longer found as Splice wrote it, is an error naming it.
func Unsplice(tpl []byte, u Unit) ([]byte, error) {
	s := string(tpl)
	start := strings.Index(s, Banner+u.Name+"\n")
	if start < 0 {
		return nil, fmt.Errorf("no section of consumer %s (its banner %q)", u.Name, strings.TrimSpace(Banner+u.Name))
	}
	end := start + len(Banner)
	if next := strings.Index(s[end:], "\n"+Banner); next >= 0 {
		end += next + 1
	} else if next := strings.Index(s[end:], outputsStart); next >= 0 {
		end += next + 1
	} else {
		return nil, errors.New("no Outputs: after the consumer's section")
	}
	s = strings.TrimRight(s[:start], "\n") + "\n\n" + s[end:]
	var problems []error
	for _, in := range u.Insertions() {
		if n := strings.Count(s, in.Text+in.Mark); n != 1 {
			problems = append(problems, fmt.Errorf("%s: found %d times above %q as it was written; want once (edited since?)",
				in.What, n, strings.TrimSpace(in.Mark)))
			continue
		}
		s = strings.Replace(s, in.Text+in.Mark, in.Mark, 1)
	}
	if n := strings.Count(s, "\n"+u.Outputs()); n != 1 {
		problems = append(problems, fmt.Errorf("its outputs: found %d times as they were written; want once (edited since?)", n))
	} else {
		s = strings.Replace(s, "\n"+u.Outputs(), "\n", 1)
	}
	if m := consumerNames.FindStringSubmatch(s); m == nil || !strings.Contains(","+m[2]+",", ","+u.Name+",") {
		problems = append(problems, errors.New("its name: not in ConsumerNames"))
	} else {
		names := strings.Trim(strings.Replace(","+m[2]+",", ","+u.Name+",", ",", 1), ",")
		if names == "" {
			names = `""`
		}
		s = strings.Replace(s, m[0], m[1]+names, 1)
	}
	if strings.Contains(s, DashboardEnd) {
		widgets, err := u.Widgets()
		if err != nil {
			return nil, err
		}
		if w := ",\n" + widgets; strings.Count(s, w) != 1 {
			problems = append(problems, errors.New("its dashboard widgets: not found as they were written"))
		} else {
			s = strings.Replace(s, w, "", 1)
		}
	}
	return []byte(s), errors.Join(problems...)
}
