package main

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/onceflow/onceflow/pkg/cloudevent"
	"github.com/onceflow/onceflow/pkg/deadletter"
)

// heldReceives is a proxy in front of fauxqs that holds every ReceiveMessage until open is
// closed: the test decides that the letters are received only after the tool's reader left.
func heldReceives(t *testing.T, open <-chan struct{}) string {
	t.Helper()
	target, err := url.Parse(os.Getenv("SQS_ENDPOINT"))
	if err != nil {
		t.Fatal(err)
	}
	proxy := httputil.NewSingleHostReverseProxy(target)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.Header.Get("X-Amz-Target"), ".ReceiveMessage") {
			<-open
		}
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// throughSQS points the cloud's endpoints.json at the SQS endpoint url.
func (c *cloud) throughSQS(t *testing.T, url string) {
	c.edit(t, func(doc map[string]any) { doc["sqs"] = url })
}

// `onceflow dlq list | head -1`: the reader leaves after the first line, and the tool's
// next write, made while it holds the letters it received, fails. The tool stops, makes every
// letter visible again at once and exits quietly with 141 (a program a closed pipe ended), not
// killed by SIGPIPE with the letters out of view for their five-minute hold.
func TestDLQ_list_into_a_reader_that_leaves_early_leaves_every_letter_in_view(t *testing.T) {
	t.Parallel()
	c := newCloud(t)
	url := c.deadLetters(t, "credit-1", "credit-2", "credit-3")
	code, first, stderr := c.intoClosedPipe(t, 1, "dlq", "list", "--queue", "LedgerDeadLetterQueue")
	if !strings.Contains(first, url) {
		t.Errorf("first line %q; want the queue's header", first)
	}
	if code != 141 || stderr != "" {
		t.Errorf("dlq list into a closed pipe: exit %d, stderr %q; want exit 141 and nothing on stderr", code, stderr)
	}
	if visible, held := c.depth(t, url); visible != 3 || held != 0 {
		t.Errorf("after dlq list into a closed pipe: %d letters visible, %d not; want all 3 visible at once", visible, held)
	}
}

// dlq redrive whose reader left goes on to the end of its run, which releases the letters it
// leaves (here all: a dry run), and exits as dlq list does.
func TestDLQ_redrive_into_a_closed_pipe_leaves_every_letter_in_view(t *testing.T) {
	t.Parallel()
	c := newCloud(t)
	url := c.deadLetters(t, "credit-1", "credit-2")
	if code, _, stderr := c.intoClosedPipe(t, 0, "dlq", "redrive", "--queue", "LedgerDeadLetterQueue", "--dry-run"); code != 141 || stderr != "" {
		t.Errorf("dlq redrive into a closed pipe: exit %d, stderr %q; want exit 141 and nothing on stderr", code, stderr)
	}
	if visible, held := c.depth(t, url); visible != 2 || held != 0 {
		t.Errorf("after dlq redrive into a closed pipe: %d letters visible, %d not; want both visible at once", visible, held)
	}
}

// intoClosedPipe runs the built tool with args on the cloud, its stdout a pipe whose reader
// reads lines lines and leaves before the tool receives any letter, and returns its exit
// status, what the reader read and the tool's stderr.
func (c *cloud) intoClosedPipe(t *testing.T, lines int, args ...string) (code int, read, stderr string) {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "onceflow")
	goCmd(t, "build", "-o", bin, ".")
	open := make(chan struct{})
	c.throughSQS(t, heldReceives(t, open))
	cmd := exec.CommandContext(t.Context(), bin, append(args, "--local", "--state", c.state)...)
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	var errOut strings.Builder
	cmd.Stdout, cmd.Stderr = w, &errOut
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	w.Close()
	head := bufio.NewReader(r)
	for range lines {
		line, err := head.ReadString('\n')
		if err != nil {
			t.Fatalf("read %q: %v", line, err)
		}
		read += line
	}
	r.Close() // head has its lines and leaves
	close(open)
	err = cmd.Wait()
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		t.Fatal(err)
	}
	return cmd.ProcessState.ExitCode(), read, errOut.String()
}

// deadLetters dead-letters an account.credited event of each id, each its own group, into
// LedgerDeadLetterQueue, and returns the queue's URL.
func (c *cloud) deadLetters(t *testing.T, ids ...string) string {
	t.Helper()
	url := c.e.Queues["LedgerDeadLetterQueue"].URL
	letters := deadletter.New(c.sqs, url)
	for _, id := range ids {
		body, _ := cloudevent.Encode(event(t, id, "account.credited", "acct-"+id))
		msg := events.SQSMessage{MessageId: "m-" + id, Body: string(body), EventSourceARN: c.e.Queues["LedgerQueue"].ARN,
			Attributes: map[string]string{"MessageGroupId": "acct-" + id, "MessageDeduplicationId": id, "ApproximateReceiveCount": "5"}}
		if err := letters.DeadLetter(t.Context(), msg, errors.New("failed 5 times: throttled")); err != nil {
			t.Fatal(err)
		}
	}
	return url
}

// dlq discard holds the letter while it asks; SIGTERM (or Ctrl-C) at the question ends the
// tool at once, the letter visible again and nothing discarded.
func TestDLQ_discard_ended_by_SIGTERM_at_its_question_leaves_the_letter_in_view(t *testing.T) {
	t.Parallel()
	bin := filepath.Join(t.TempDir(), "onceflow")
	goCmd(t, "build", "-o", bin, ".")
	c := newCloud(t)
	url := c.deadLetters(t, "credit-1")
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "dlq", "discard", "--queue", "LedgerDeadLetterQueue", "--consumer", "ledger",
		"--why", "producer bug", "--by", "ops", "credit-1", "--local", "--state", c.state)
	stdin, err := cmd.StdinPipe() // left open: nobody answers
	if err != nil {
		t.Fatal(err)
	}
	defer stdin.Close()
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	asked, err := readUntil(stdout, "[y/N] ")
	if err != nil {
		t.Fatalf("dlq discard printed %q (%v); want its question", asked, err)
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, stdout)
	err = cmd.Wait()
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		t.Fatal(err)
	}
	if ctx.Err() != nil || cmd.ProcessState.ExitCode() != 1 || strings.Contains(stderr.String(), "goroutine") {
		t.Errorf("dlq discard at its question, SIGTERM: %v (deadline: %v), stderr %q; want exit 1 at once, no stack trace", cmd.ProcessState, ctx.Err(), stderr.String())
	}
	if visible, held := c.depth(t, url); visible != 1 || held != 0 {
		t.Errorf("after SIGTERM at dlq discard's question: %d letters visible, %d not; want the letter visible at once", visible, held)
	}
}

// readUntil reads r until what it read ends with suffix, and returns what it read.
func readUntil(r io.Reader, suffix string) (string, error) {
	var read []byte
	b := make([]byte, 1)
	for !strings.HasSuffix(string(read), suffix) {
		if _, err := r.Read(b); err != nil {
			return string(read), err
		}
		read = append(read, b[0])
	}
	return string(read), nil
}
