package consumerunit

import (
	"bytes"
	"embed"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"text/template"
)

//go:embed templates/*.tmpl
var templates embed.FS

var tmpl = template.Must(template.ParseFS(templates, "templates/*.tmpl"))

// Unit is one consumer's unit with every parameter in which consumers differ: what a
// template's consumer is rendered from. Consumer.Unit gives a project's consumer its defaults.
type Unit struct {
	Name        string   // CONSUMER_NAME, kebab-case: alarm names, record keys "<name>#"
	ID          string   // the function's logical-id stem: NoteTagger -> NoteTaggerFunction
	QueueID     string   // the queues' logical-id stem: Notes -> NotesQueue, NotesDeadLetterQueue
	Description string   // the function's Description
	CodeURI     string   // the function's CodeUri ("" -> ".")
	Types       []string // the event types it applies
	// Writes are the partition keys it may write in the application table (AppTable), as
	// dynamodb:LeadingKeys patterns ("NOTE#*"); none: it is not told of the table at all.
	Writes []string
	// HoldGroup: it holds a group behind a dead letter, so every commit checks the group's
	// hold (ConditionCheckItem and DeleteItem on every record key, holds included); without
	// it ConditionCheckItem is granted on its records "<name>#*" only.
	HoldGroup bool
	// Lease: it is a lease consumer (pkg/lease), which releases a lease (DeleteItem) and
	// fences its commits (ConditionCheckItem) on every record key: the grants of HoldGroup.
	Lease bool
	// ClaimChecks: it reads claim checks from PayloadBucket and writes its dead letters past
	// SQS's 1 MiB there, under dead-letters/<name>/.
	ClaimChecks bool
	// DeadLetterCauses are what dead-letters one of its messages, as its alarm says it;
	// "" -> "malformed, or failed maxReceiveCount times".
	DeadLetterCauses string
	// Note is a comment under the unit's banner, one line: who wrote it, for example.
	Note        string
	Environment []string // more environment variables, each a YAML line "KEY: value"
	Statements  []string // more policy statements, each YAML text at the statements' indent
}

// Alarm is one CloudWatch alarm of a unit.
type Alarm struct {
	ID, Name, Description               string // logical id, name after "${AWS::StackName}-"
	Namespace, Metric, Dimension, Value string // Value: YAML, a literal or an intrinsic
	Statistic                           string
	Period, Evaluations, Threshold      int
}

var (
	validName  = regexp.MustCompile(`^[a-z][a-z0-9]*(-[a-z0-9]+)*$`)
	validID    = regexp.MustCompile(`^[A-Z][A-Za-z0-9]*$`)
	validType  = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]*$`)
	validKey   = regexp.MustCompile(`^[A-Za-z0-9#_.:-]+\*?$`)
	unsafeText = regexp.MustCompile(`["\\\n]`)
)

// Validate says what of u cannot be rendered, every problem at once.
func (u Unit) Validate() error {
	var errs []error
	if !validName.MatchString(u.Name) {
		errs = append(errs, fmt.Errorf("name %q: want lower-case words joined by '-' (word-count)", u.Name))
	}
	for what, id := range map[string]string{"ID": u.ID, "QueueID": u.QueueID} {
		if !validID.MatchString(id) {
			errs = append(errs, fmt.Errorf("%s %q: want a CamelCase logical-id stem (WordCount)", what, id))
		}
	}
	if len(u.Types) == 0 {
		errs = append(errs, errors.New("no event type"))
	}
	for _, t := range u.Types {
		if !validType.MatchString(t) {
			errs = append(errs, fmt.Errorf("type %q: want an event type (note.created)", t))
		}
	}
	for _, k := range u.Writes {
		if !validKey.MatchString(k) {
			errs = append(errs, fmt.Errorf("writes %q: want a key pattern (NOTE#*)", k))
		}
	}
	if strings.Contains(u.Note, "\n") {
		errs = append(errs, fmt.Errorf("note %q: one line", u.Note))
	}
	for what, s := range map[string]string{"description": u.Description, "code uri": u.CodeURI, "dead-letter causes": u.DeadLetterCauses} {
		if unsafeText.MatchString(s) || strings.HasPrefix(s, " ") {
			errs = append(errs, fmt.Errorf("%s %q: no quote, backslash or line break", what, s))
		}
	}
	return errors.Join(errs...)
}

// Resources is the unit's part of the Resources of a template: YAML text under a banner that
// names the consumer, indented as a template's resources are.
func (u Unit) Resources() ([]byte, error) {
	if err := u.Validate(); err != nil {
		return nil, fmt.Errorf("consumer unit %s: %w", u.Name, err)
	}
	if u.CodeURI == "" {
		u.CodeURI = "."
	}
	var b bytes.Buffer
	if err := tmpl.ExecuteTemplate(&b, "unit.yaml.tmpl", u); err != nil {
		return nil, fmt.Errorf("consumer unit %s: %w", u.Name, err)
	}
	return b.Bytes(), nil
}

// Widgets are the unit's dashboard widgets, JSON array elements under a DashboardBody's
// !Sub: its outcomes, its commit latency, its queue's age, its dead letters, its function's
// errors and throttles.
func (u Unit) Widgets() (string, error) {
	var b bytes.Buffer
	if err := tmpl.ExecuteTemplate(&b, "widgets.json.tmpl", u); err != nil {
		return "", fmt.Errorf("consumer unit %s: %w", u.Name, err)
	}
	return strings.TrimRight(b.String(), "\n"), nil
}

// Outputs is the unit's part of the Outputs of a template: its queues' URLs, which the
// operator's tool reads (onceflow --stack).
func (u Unit) Outputs() string {
	return fmt.Sprintf("  %[1]sQueueUrl:\n    Value: !Ref %[1]sQueue\n  %[1]sDeadLetterQueueUrl:\n    Value: !Ref %[1]sDeadLetterQueue\n", u.QueueID)
}

// Alarms are the unit's alarms: its dead letters, its queue's age, its function's errors and
// throttles, its conflicts and its access denials. Each is named "${AWS::StackName}-<name>-...",
// so that two stacks in one account never share an alarm's name.
func (u Unit) Alarms() []Alarm {
	causes := u.DeadLetterCauses
	if causes == "" {
		causes = "malformed, or failed maxReceiveCount times"
	}
	held := ""
	if u.HoldGroup {
		held = "; its group is held behind it"
	}
	q, dlq, fn := "!GetAtt "+u.QueueID+"Queue.QueueName", "!GetAtt "+u.QueueID+"DeadLetterQueue.QueueName", "!Ref "+u.ID+"Function"
	return []Alarm{
		{u.QueueID + "DeadLetterQueueDepthAlarm", u.Name + "-dlq-not-empty",
			"A message of the " + u.Name + " consumer was dead-lettered (" + causes + ")" + held + ". Read why: onceflow dlq list --queue <" + u.QueueID + "DeadLetterQueue url>; after the fix: onceflow dlq redrive --queue <url>.",
			"AWS/SQS", "ApproximateNumberOfMessagesVisible", "QueueName", dlq, "Maximum", 60, 1, 0},
		{u.QueueID + "QueueAgeAlarm", u.Name + "-queue-age",
			"The oldest " + u.Name + " message waits more than 5 minutes (the consumer is stuck or slow).",
			"AWS/SQS", "ApproximateAgeOfOldestMessage", "QueueName", q, "Maximum", 60, 5, 300},
		{u.ID + "FunctionErrorsAlarm", u.Name + "-errors",
			"The " + u.Name + " function failed invocations (crash, timeout, init failure or a whole-batch error) in the last minute.",
			"AWS/Lambda", "Errors", "FunctionName", fn, "Sum", 60, 1, 0},
		{u.ID + "FunctionThrottlesAlarm", u.Name + "-throttles",
			"Lambda throttled " + u.Name + " invocations in the last 5 minutes: the account or the function ran out of concurrency.",
			"AWS/Lambda", "Throttles", "FunctionName", fn, "Sum", 300, 1, 0},
		{u.ID + "ConflictAlarm", u.Name + "-conflicts",
			"The " + u.Name + " consumer received an event id it had recorded with another payload (a producer bug): the message was dead-lettered, not applied.",
			"onceflow", "Conflict", "Consumer", u.Name, "Sum", 60, 1, 0},
		{u.ID + "AccessDeniedAlarm", u.Name + "-access-denied",
			"AWS refused a call of the " + u.Name + " consumer for want of a permission (its log line 'AWS call denied: a permission is missing' names it): the message was left for redelivery, not counted against it, not dead-lettered. Grant it to the function's role (onceflow's runbook: a permission is missing).",
			"onceflow", "AccessDenied", "Consumer", u.Name, "Sum", 60, 1, 0},
	}
}
