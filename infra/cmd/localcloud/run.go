package main

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"syscall"
	"time"

	"github.com/onceflow/onceflow/infra/gatekeeper"
	"github.com/onceflow/onceflow/infra/localcloud"
	"github.com/onceflow/onceflow/infra/workload"
)

// errInvariants is returned when the workload ran and an invariant failed.
var errInvariants = errors.New("an invariant failed")

// errDenied is returned when run stopped at the gatekeeper's first refusal.
var errDenied = errors.New("stopped: the gatekeeper refused a call")

// printDenied says which call of which function the gatekeeper refused, the statement of its
// role that came closest to allowing it and why it did not, and where to grant it.
func printDenied(w io.Writer, d gatekeeper.Denial, template, log string) {
	fmt.Fprintf(w, "\nSTOPPED: the gatekeeper refused a call of %s, as AWS would refuse it on its first deploy", d.Principal)
	if !d.At.IsZero() {
		fmt.Fprintf(w, " (%s ago)", time.Since(d.At).Round(100*time.Millisecond))
	}
	fmt.Fprintln(w)
	fmt.Fprintf(w, "  function:  %s\n  action:    %s\n  resource:  %s\n", d.Principal, d.Action, d.Resource)
	if d.Closest != "" {
		fmt.Fprintf(w, "  closest:   %s\n", d.Closest)
	}
	fmt.Fprintf(w, "  why:       %s\n", cmp.Or(d.Why, "no statement of its role allows any action of the service"))
	fmt.Fprintf(w, "grant %s to %s in %s (its Policies), or change the code that calls it; every refusal is in %s\n",
		d.Action, d.Principal, template, log)
}

// runCmd starts the local cloud in the foreground, runs the demo workload through it, prints
// the summary, and stops the cloud (or keeps it up until SIGINT, SIGTERM or `make down`).
func runCmd(args []string) error { return runWith("run", args) }

// runWith is runCmd, or chaosCmd when name is "chaos": the same workload, larger, with
// faults injected (chaosFlags) and the dead-letter queues redriven.
func runWith(name string, args []string) error {
	var o options
	var wl workload.Config
	var keep bool
	var visibility int
	var crashFn string
	var crashAfter int
	var cpuProfile string
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.StringVar(&cpuProfile, "cpuprofile", "", "write this process's CPU profile (the proxies, gatekeeper, pollers, API and workload driver) to the file, for `go tool pprof`")
	fs.IntVar(&wl.Notes, "notes", 200, "notes to create")
	fs.IntVar(&wl.Movements, "movements", 1000, "credits and debits to send")
	fs.IntVar(&wl.Accounts, "accounts", 50, "accounts the movements spread over")
	fs.Float64Var(&wl.RetryRate, "retry", 0.2, "share of API requests retried with the same key or reference")
	fs.Float64Var(&wl.ResendRate, "resend", 0.1, "share of events re-sent to their queue under a new dedup id")
	fs.IntVar(&wl.Malformed, "malformed", 3, "malformed messages injected into each consumer queue")
	fs.Int64Var(&wl.Seed, "seed", 1, "seed of the workload's random choices")
	fs.BoolVar(&keep, "keep", false, "keep the local cloud up after the summary, until interrupted or `make down`")
	fs.IntVar(&visibility, "visibility", 10, "queue visibility timeout in seconds (0: the template's), so a crashed batch returns sooner")
	fs.StringVar(&crashFn, "crash", "LedgerFunction", "function whose environment is killed once after a committed invocation (\"\": none)")
	fs.IntVar(&crashAfter, "crash-after", 3, "crash after this invocation of -crash")
	var ch *chaosFlags
	if name == "chaos" {
		ch = newChaosFlags(fs)
	}
	if _, err := o.parse(fs, args); err != nil {
		return err
	}
	if ch != nil {
		crashFn = ch.apply(&wl, fs)
	}
	if cpuProfile != "" {
		stop, err := profileCPU(cpuProfile)
		if err != nil {
			return err
		}
		defer stop()
	}
	if pid, ok := localcloud.Running(o.state); ok {
		return fmt.Errorf("already up (supervisor pid %d): run `localcloud down` first (in this repository: make down)", pid)
	}
	cfg, err := o.config()
	if err != nil {
		return err
	}
	if err := demoTemplate(cfg.Template); err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	recv, err := workload.NewReceiver(nil)
	if err != nil {
		return err
	}
	defer recv.Close()
	if err := workload.ServeWebhookParameters(&cfg, cfg.Template, recv); err != nil {
		return err
	}
	wl.Receiver = recv
	if crashFn != "" {
		wl.Crash = &workload.Crash{Function: crashFn, After: crashAfter}
		cfg.CrashAfterInvoke = wl.Crash.Hook
	}
	cfg.VisibilityTimeout = visibility
	if ch != nil {
		cfg.Chaos = ch.chaos
	}
	wl.Progress = os.Stdout
	wl.StopOnDenial = ch == nil // run stops at the first refusal; chaos shows refusals and checks them at the end
	if err := os.MkdirAll(filepath.Join(o.state, "logs"), 0o755); err != nil {
		return err
	}
	logPath := filepath.Join(o.state, "logs", "localcloud.log")
	logf, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o644)
	if err != nil {
		return err
	}
	defer logf.Close()
	cfg.Logger = slog.New(slog.NewTextHandler(logf, nil))

	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	began := time.Now()
	fmt.Printf("starting the local cloud from %s (installs and builds what is missing; log %s)\n", o.template, logPath)
	cloud, err := localcloud.Start(ctx, cfg)
	if err != nil {
		return err
	}
	if err := cloud.SetSupervisor(os.Getpid()); err != nil {
		return errors.Join(err, cloud.Close())
	}
	ep := cloud.Endpoints()
	fmt.Printf("local cloud up in %s: API %s (tokens from %s), DynamoDB %s, SQS %s\n", time.Since(began).Round(100*time.Millisecond),
		ep.APIURL, ep.TokenURL, ep.DynamoDB, ep.SQS)
	fmt.Println(gateLine(ep))
	if visibility > 0 {
		fmt.Printf("queue visibility timeout shortened to %d s for the demo (-visibility 0 keeps the template's)\n", visibility)
	}
	fmt.Printf("workload: %d notes, %d credits/debits, %d accounts, %.0f%% retried, %.0f%% re-sent, %d malformed/queue, crash %s\n",
		wl.Notes, wl.Movements, wl.Accounts, wl.RetryRate*100, wl.ResendRate*100, wl.Malformed, crashFn)
	rep, err := workload.Run(ctx, cloud, wl)
	var denied *workload.DeniedError
	if errors.As(err, &denied) {
		printDenied(os.Stdout, denied.Denial, o.template, logPath)
		return errors.Join(errDenied, cloud.Close())
	}
	if err != nil {
		return errors.Join(err, cloud.Close())
	}
	rep.Print(os.Stdout)
	if ch != nil && len(rep.FaultsBelow(workload.FaultFloor)) > 0 {
		fmt.Printf("note: not every fault kind reached %d injections at this size\n", workload.FaultFloor)
	}
	fmt.Printf("\ntotal %s (start-up included)\n", time.Since(began).Round(100*time.Millisecond))
	page := filepath.Join(o.state, "report.html")
	if err := rep.WriteHTML(page); err != nil {
		return errors.Join(err, cloud.Close())
	}
	fmt.Printf("report: %s (charts; opens offline in a browser)\n", page)
	if keep {
		fmt.Printf("kept up: endpoints in %s; `localcloud down` (in this repository: make down) or Ctrl-C stops it\n", filepath.Join(o.state, "endpoints.json"))
		<-ctx.Done()
	}
	if err := cloud.Close(); err != nil {
		return err
	}
	if !rep.OK() {
		return errInvariants
	}
	return nil
}

// demoTemplate refuses a template other than the demo application's: run and chaos drive its
// notes and ledger (workload.Run), which another project's template does not have.
func demoTemplate(path string) error {
	t, err := localcloud.LoadTemplate(path)
	if err != nil {
		return err
	}
	if !slices.Contains(t.Tables, "AppTable") || !slices.Contains(t.Tables, "IdempotencyTable") || !t.Declares(workload.WebhookURLParameterName) {
		return fmt.Errorf("%s is not this repository's demo application (its AppTable, IdempotencyTable and %s parameter): "+
			"the workload drives the demo's notes and ledger; for another template, `localcloud up`, then `send`, `scan` and `down`",
			path, workload.WebhookURLParameterName)
	}
	return nil
}
