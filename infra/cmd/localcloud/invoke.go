package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/onceflow/onceflow/infra/gatekeeper"
	"github.com/onceflow/onceflow/infra/localcloud"
)

// invoke invokes a function of the running cloud on an event file, prints the raw response,
// and, for an SQS event, what became of each message as the function logged it.
func invoke(args []string) error {
	var o options
	fs, err := o.flags("invoke", args)
	if err != nil {
		return err
	}
	ep, err := localcloud.ReadEndpoints(o.state)
	if err != nil {
		return err
	}
	if fs.NArg() != 2 {
		ids := make([]string, 0, len(ep.Functions))
		for id := range ep.Functions {
			ids = append(ids, id)
		}
		slices.Sort(ids)
		return fmt.Errorf("usage: localcloud invoke FUNCTION EVENT.json (in this repository: make invoke FN=<function> EVENT=events/<file>.json; a sample event: ls events/)\n  functions: %s",
			strings.Join(ids, ", "))
	}
	fn, err := functionName(ep, fs.Arg(0))
	if err != nil {
		return err
	}
	var payload []byte
	if f := fs.Arg(1); f == "-" {
		payload, err = io.ReadAll(os.Stdin)
	} else {
		payload, err = os.ReadFile(f)
	}
	if err != nil {
		return err
	}
	before := sizes(localcloud.LogFiles(o.state, fn))
	stats, _ := ep.ReadStats(context.Background())
	defer printNewDenials(os.Stdout, ep, stats.Access)
	out, err := localcloud.NewLambdaAPI(ep.LambdaURL).Invoke(context.Background(), fn, payload)
	var fe *localcloud.FunctionError
	if errors.As(err, &fe) {
		fmt.Printf("response: %s\n", fe.Payload)
		return fmt.Errorf("%s: %s; `make logs FN=%s` shows its log (%s)", fn, fe.Type, fn, filepath.Join(o.state, "logs", fn+"-*.log"))
	}
	if err != nil {
		return err
	}
	fmt.Printf("response: %s\n", out)
	if ids := messageIDs(payload); len(ids) > 0 {
		printOutcomes(os.Stdout, outcomes(o.state, fn, before, ids, failedIDs(out)))
	}
	return nil
}

// messageIDs returns the SQS message ids of an SQS event, none for any other event.
func messageIDs(payload []byte) []string {
	var ev struct {
		Records []struct {
			MessageID   string `json:"messageId"`
			EventSource string `json:"eventSource"`
		}
	}
	_ = json.Unmarshal(payload, &ev)
	var ids []string
	for _, r := range ev.Records {
		if r.EventSource == "aws:sqs" && r.MessageID != "" {
			ids = append(ids, r.MessageID)
		}
	}
	return ids
}

// failedIDs returns the batchItemFailures of a partial batch response.
func failedIDs(resp []byte) []string {
	var r struct {
		BatchItemFailures []struct {
			ItemIdentifier string `json:"itemIdentifier"`
		} `json:"batchItemFailures"`
	}
	_ = json.Unmarshal(resp, &r)
	var ids []string
	for _, f := range r.BatchItemFailures {
		ids = append(ids, f.ItemIdentifier)
	}
	return ids
}

// outcome is what became of one message of an invocation.
type outcome struct {
	messageID, eventType, eventID string
	result, reason                string // result as the consumer logged it: applied, duplicate, rejected, ...
	deadLettered, failed          bool
}

// outcomes reads what the function logged about each message since offsets, waiting up to 2 s
// for the lines to reach the log files.
func outcomes(state, fn string, offsets map[string]int64, ids, failed []string) []outcome {
	var out []outcome
	for deadline := time.Now().Add(2 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		lines := newLines(state, fn, offsets)
		out = out[:0]
		complete := true
		for _, id := range ids {
			o := outcomeOf(id, lines)
			o.failed = slices.Contains(failed, id)
			complete = complete && (o.result != "" || o.deadLettered || o.failed)
			out = append(out, o)
		}
		if complete || time.Now().After(deadline) {
			return out
		}
	}
}

func newLines(state, fn string, offsets map[string]int64) []localcloud.LogLine {
	var lines []localcloud.LogLine
	for env, path := range localcloud.LogFiles(state, fn) {
		b, err := os.ReadFile(path)
		if err != nil || int64(len(b)) < offsets[path] {
			continue
		}
		for _, s := range strings.Split(string(b[offsets[path]:]), "\n") {
			if l, ok := localcloud.ParseLogLine(env, s); ok {
				lines = append(lines, l)
			}
		}
	}
	return lines
}

func outcomeOf(id string, lines []localcloud.LogLine) outcome {
	o := outcome{messageID: id}
	for _, l := range lines {
		if l.Attr("messageId") != id {
			continue
		}
		if r := l.Attr("outcome"); r != "" {
			o.result, o.eventType, o.eventID = r, l.Attr("eventType"), l.Attr("eventId")
			if s := l.Attr("stored"); s != "" {
				o.result += " (first processing: " + s + ")"
			}
		}
		if r := firstOf(l.Attr("reason"), l.Attr("error")); r != "" && o.reason == "" {
			o.reason = r
		}
		o.deadLettered = o.deadLettered || strings.Contains(l.Msg, "dead-lettered and acknowledged")
	}
	return o
}

func firstOf(s ...string) string {
	for _, v := range s {
		if v != "" {
			return v
		}
	}
	return ""
}

func printOutcomes(w io.Writer, outs []outcome) {
	fmt.Fprintln(w, "messages:")
	for _, o := range outs {
		what := o.result
		if what == "" {
			what = "no outcome logged"
		}
		if o.reason != "" {
			what += ": " + o.reason
		}
		switch {
		case o.deadLettered:
			what += "; dead-lettered"
		case o.failed:
			what += "; reported failed: left on the queue for redelivery"
		}
		event := strings.TrimSpace(o.eventType + " " + o.eventID)
		if event != "" {
			event = " (" + event + ")"
		}
		fmt.Fprintf(w, "  %s  %s%s\n", o.messageID, what, event)
	}
}

// printNewDenials prints the refusals of the gatekeeper the running cloud at ep counted since
// before (nil: none before): each call of the invocation, or of a poller meanwhile, that AWS
// would refuse too.
func printNewDenials(w io.Writer, ep localcloud.Endpoints, before *gatekeeper.Stats) {
	after, err := ep.ReadStats(context.Background())
	if err != nil || after.Access == nil {
		return
	}
	seen := map[string]int{}
	if before != nil {
		for _, d := range before.Denials {
			seen[d.Principal+" "+d.Action+" "+d.Resource] = d.Count
		}
	}
	for _, d := range after.Access.Denials {
		if n := d.Count - seen[d.Principal+" "+d.Action+" "+d.Resource]; n > 0 {
			d.Count = n
			fmt.Fprintf(w, "DENIED %s\n", d.Explain())
		}
	}
}
