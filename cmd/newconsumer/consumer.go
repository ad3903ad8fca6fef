package main

import (
	"fmt"
	"regexp"
	"strings"
)

// consumer is what the templates are written from.
type consumer struct {
	Name   string   // word-count: CONSUMER_NAME, functions/word-count
	ID     string   // WordCount: WordCountFunction, WordCountQueue, ...
	Pkg    string   // wordcount: internal/wordcount
	Prefix string   // WORD_COUNT: the partition keys it writes, WORD_COUNT#...
	Types  []string // the event types routed to its queue
	Alarms []alarm
}

// alarm is one CloudWatch alarm of the consumer.
type alarm struct {
	ID, Name, Description               string
	Namespace, Metric, Dimension, Value string
	Statistic                           string
	Period, Evaluations, Threshold      int
}

var (
	validName = regexp.MustCompile(`^[a-z][a-z0-9]*(-[a-z0-9]+)*$`)
	validType = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]*$`)
)

func newConsumer(name string, types []string) (*consumer, error) {
	if !validName.MatchString(name) {
		return nil, fmt.Errorf("name %q: want lower-case words joined by '-' (word-count)", name)
	}
	var ts []string
	for _, t := range types {
		if t = strings.TrimSpace(t); !validType.MatchString(t) {
			return nil, fmt.Errorf("type %q: want an event type (note.created)", t)
		}
		ts = append(ts, t)
	}
	c := &consumer{Name: name, Pkg: strings.ReplaceAll(name, "-", ""), Types: ts,
		Prefix: strings.ToUpper(strings.ReplaceAll(name, "-", "_"))}
	for _, w := range strings.Split(name, "-") {
		c.ID += strings.ToUpper(w[:1]) + w[1:]
	}
	c.Alarms = c.alarms()
	return c, nil
}

// TypeList is the event types, comma-separated.
func (c *consumer) TypeList() string { return strings.Join(c.Types, ",") }

func (c *consumer) alarms() []alarm {
	q, dlq, fn := "!GetAtt "+c.ID+"Queue.QueueName", "!GetAtt "+c.ID+"DeadLetterQueue.QueueName", "!Ref "+c.ID+"Function"
	return []alarm{
		{c.ID + "DeadLetterQueueDepthAlarm", c.Name + "-dlq-not-empty",
			"A " + c.Name + " message was dead-lettered. Read why: onceflow dlq list --queue " + c.ID + "DeadLetterQueue; after the fix: onceflow dlq redrive --queue " + c.ID + "DeadLetterQueue.",
			"AWS/SQS", "ApproximateNumberOfMessagesVisible", "QueueName", dlq, "Maximum", 60, 1, 0},
		{c.ID + "QueueAgeAlarm", c.Name + "-queue-age",
			"The oldest " + c.Name + " message waits more than 5 minutes (the consumer is stuck or slow).",
			"AWS/SQS", "ApproximateAgeOfOldestMessage", "QueueName", q, "Maximum", 60, 5, 300},
		{c.ID + "FunctionErrorsAlarm", c.Name + "-errors", "The " + c.Name + " function failed invocations in the last minute.",
			"AWS/Lambda", "Errors", "FunctionName", fn, "Sum", 60, 1, 0},
		{c.ID + "FunctionThrottlesAlarm", c.Name + "-throttles", "Lambda throttled " + c.Name + " invocations in the last 5 minutes.",
			"AWS/Lambda", "Throttles", "FunctionName", fn, "Sum", 300, 1, 0},
		{c.ID + "ConflictAlarm", c.Name + "-conflicts",
			"The " + c.Name + " consumer received an event id it had recorded with another payload (a producer bug): the message was dead-lettered, not applied.",
			"onceflow", "Conflict", "Consumer", c.Name, "Sum", 60, 1, 0},
		{c.ID + "AccessDeniedAlarm", c.Name + "-access-denied",
			"AWS refused a call of the " + c.Name + " consumer for want of a permission (its log line 'AWS call denied: a permission is missing' names it): the message was left for redelivery, not counted against it, not dead-lettered. Grant the permission: docs/runbook.md, a permission is missing.",
			"onceflow", "AccessDenied", "Consumer", c.Name, "Sum", 60, 1, 0},
	}
}
