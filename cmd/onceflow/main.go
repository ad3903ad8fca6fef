package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
)

func main() {
	// A write to a closed stdout or stderr fails (EPIPE) instead of killing the tool (Go's
	// runtime kills a program on SIGPIPE from fd 1 or 2 unless SIGPIPE is notified), and
	// Ctrl-C and SIGTERM cancel the command: either way it stops and makes the letters it
	// holds visible again before it exits.
	signal.Notify(make(chan os.Signal, 1), syscall.SIGPIPE)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	os.Exit(run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

const usage = `onceflow: the operator's tool for onceflow (AWS with the default credential chain, or --local)

usage: onceflow <command> <subcommand> [flags] [args]

  dlq list      --queue Q [--group G] [--reason TEXT] [--type T] [--limit N]
                                                         dead letters, reasons
  dlq show      --queue Q ID                             one dead letter: attributes and body
  dlq redrive   --queue Q [--to Q] [--group G] [--reason TEXT] [--type T] [--limit N] [--dry-run]
                                                         back to their source queue, in order
  dlq discard   --queue Q --consumer C --why TEXT [--by WHO] [--yes] ID
                                                         never apply it: recorded, the group goes on
  record get    --consumer C [--group G] EVENT_ID        a consumer's record, attempts and hold
  record delete --consumer C EVENT_ID [--yes]            clear it: a redelivery applies it again
  hold get      --consumer C GROUP                       a group held behind a dead letter
  hold release  --consumer C GROUP [--yes]               let the group go on without any held message
  hold skip     --consumer C --why TEXT [--by WHO] [--queue Q] GROUP [--yes]
                                                         go on past the blocker, the held tail in order
  outbox republish [--event-id ID]... [--since T] [--until T] [--dry-run]
                                                         re-send outbox events to their queues

  init          DIR --module M --queue Q --event TYPE [--engine PATH]
                                                         a new project of one consumer of your own
  add-consumer  [DIR] --queue Q --event TYPE             one more consumer in that project

A letter's ID is any id the tools print for it: its message id (dlq list's first), the id it
was first sent as (what a producer and make send were told; hold get's messageId) or its event
id. A decision (dlq discard, hold skip) is recorded with who decided: --by, by default the
caller's identity (on AWS the ARN sts:GetCallerIdentity answers; with --local
local:USER@HOST).

Every subcommand takes --stack NAME (a deployed stack: its outputs name the queues, tables,
routes and consumers), --local (the local cloud of make up: .local/endpoints.json; --state;
--as PRINCIPAL calls through its gatekeeper as a function's role or a managed policy's, such as
OperatorPolicy; --env-credentials signs as the environment's principal), --region,
--endpoint-url URL (every call to URL) and --help, after the subcommand's name. On AWS the
credentials are the SDK's chain (environment, AWS_PROFILE, SSO, a container's role) without the
EC2 instance metadata service unless --imds: with none the tool says so and calls nothing. The
stack's OperatorPolicyArn output is the policy the tool needs. With either, queues and tables are named by
logical id (LedgerDeadLetterQueue, AppTable) and --table has a default; without, give URLs
and names (--queue URL, --table NAME, --route TYPE=QUEUE). record, hold, outbox and dlq discard
take --table (the idempotency or app table); outbox republish takes --route TYPE=QUEUE (default: the
stack's OutboxRoutes output).`

// command is one subcommand: it registers its flags and runs with the arguments left.
type command struct {
	flags func(fs *flag.FlagSet)
	run   func(ctx context.Context, t *target, args []string, io ioStreams) error
}

type ioStreams struct {
	in       *bufio.Reader
	out, err io.Writer
}

func commands() map[string]command {
	return map[string]command{
		"dlq list": dlqList(), "dlq show": dlqShow(), "dlq redrive": dlqRedrive(), "dlq discard": dlqDiscard(),
		"record get": recordGet(), "record delete": recordDelete(),
		"hold get": holdGet(), "hold release": holdRelease(), "hold skip": holdSkip(),
		"outbox republish": outboxRepublish(),
	}
}

// run runs the command of args and returns the exit status: 0, 1 for a failure, 2 for a
// usage error.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) > 0 && projectCommands[args[0]] != nil {
		return runProject(ctx, args[0], args[1:], stdout, stderr)
	}
	if len(args) < 2 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		fmt.Fprintln(stderr, usage)
		if len(args) > 0 && (args[0] == "-h" || args[0] == "--help" || args[0] == "help") {
			return 0
		}
		return 2
	}
	if strings.HasPrefix(args[0], "-") {
		fmt.Fprintf(stderr, "onceflow: flags go after the subcommand, as in: onceflow dlq list %s\n\n%s\n", args[0], usage)
		return 2
	}
	if args[1] == "-h" || args[1] == "--help" {
		fmt.Fprintln(stderr, usage)
		return 0
	}
	name := args[0] + " " + args[1]
	cmd, ok := commands()[name]
	if !ok {
		fmt.Fprintf(stderr, "onceflow: unknown command %q\n\n%s\n", name, usage)
		return 2
	}
	fs := flag.NewFlagSet("onceflow "+name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	var tf targetFlags
	tf.register(fs)
	cmd.flags(fs)
	rest, err := parse(fs, args[2:])
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	out := &output{w: stdout}
	t, err := tf.open(ctx)
	if err == nil {
		err = cmd.run(ctx, t, rest, ioStreams{in: bufio.NewReader(stdin), out: out, err: stderr})
	}
	if errors.Is(out.err, syscall.EPIPE) { // its reader left: nothing to say, nowhere to say it
		return exitClosedPipe
	}
	if err == nil {
		err = out.err
	}
	return status(name, err, fs, stderr)
}

// status is the exit status of command name that returned err, which it prints on stderr: 0,
// 1 for a failure, 2 for a usage error (the command's usage follows).
func status(name string, err error, fs *flag.FlagSet, stderr io.Writer) int {
	var ue usageError
	switch {
	case errors.As(err, &ue):
		fmt.Fprintf(stderr, "onceflow %s: %v\n", name, err)
		fs.Usage()
		return 2
	case err != nil:
		fmt.Fprintf(stderr, "onceflow %s: %v\n", name, err)
		return 1
	}
	return 0
}

// parse parses args with fs, flags before, between and after the positional arguments, and
// returns the positional ones.
func parse(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		if fs.NArg() == 0 {
			return pos, nil
		}
		pos, args = append(pos, fs.Arg(0)), fs.Args()[1:]
	}
}

// usageError is a command used wrongly.
type usageError string

func (e usageError) Error() string { return string(e) }

// confirm asks question on out and reports whether the answer read from in is yes; a
// question it could not write is not answered yes, nor one ctx ended (Ctrl-C, SIGTERM) before
// the answer came.
func confirm(ctx context.Context, s ioStreams, question string) bool {
	if _, err := fmt.Fprintf(s.out, "%s [y/N] ", question); err != nil {
		return false
	}
	answered := make(chan string, 1)
	go func() { // left reading when ctx ends first: the tool is about to exit
		answer, _ := s.in.ReadString('\n')
		answered <- answer
	}()
	select {
	case <-ctx.Done():
		return false
	case answer := <-answered:
		answer = strings.ToLower(strings.TrimSpace(answer))
		return answer == "y" || answer == "yes"
	}
}
