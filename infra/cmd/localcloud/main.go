package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/onceflow/onceflow/infra/localcloud"
	"github.com/onceflow/onceflow/infra/workload"
	"github.com/onceflow/onceflow/internal/webhooktest"
)

func main() {
	if len(os.Args) < 2 {
		usage()
	}
	var err error
	switch cmd, args := os.Args[1], os.Args[2:]; cmd {
	case "up":
		err = up(args)
	case "serve":
		err = serve(args)
	case "down":
		err = down(args)
	case "invoke":
		err = invoke(args)
	case "run":
		err = runCmd(args)
	case "chaos":
		err = chaosCmd(args)
	case "logs":
		err = logsCmd(args)
	case "scan":
		err = scanCmd(args)
	case "queue":
		err = queueCmd(args)
	case "send":
		err = sendCmd(args)
	case "install":
		err = installCmd(args)
	case "support":
		err = supportCmd(args)
	case "help", "-h", "--help", "-help":
		fmt.Println(usageText)
		return
	default:
		usage()
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "localcloud:", err)
		os.Exit(1)
	}
}

// usage says how to call the tool, on its standard error, and exits with a usage error.
func usage() {
	fmt.Fprintln(os.Stderr, usageText)
	os.Exit(2)
}

const usageText = `usage:
  localcloud up [-template template.yaml] [-state .local] [-envs Fn=3,Other=1] [-prefix name] [-shards 1] [-param Name=Value ...] [-ungated]
  localcloud run [up flags] [-notes 200] [-movements 1000] [-accounts 50] [-keep] [-visibility 10] [-crash LedgerFunction]
  localcloud chaos [run flags] [-events 20000] [-poison 3 -cli .local/bin/onceflow] [-throttle 0.005 -server-error … -kill-during 0.02 -kill-after 0.01]
  localcloud down [-state .local]
  localcloud invoke [-state .local] FUNCTION EVENT.json|-
  localcloud logs [-state .local] [-f] FUNCTION
  localcloud scan [-state .local] [-limit 50] [TABLE]
  localcloud queue [-state .local] [QUEUE]
  localcloud send [-state .local] [-group G] QUEUE BODY|-
  localcloud install          (the pinned emulators and aws-lambda-rie, into the user's cache)
  localcloud support          (what of SAM the local cloud runs)
  localcloud help             (this)`

// options are the flags of up and serve.
type options struct {
	template, state, prefix, envs string
	shards                        int
	params                        map[string]string
	ungated                       bool
}

func (o *options) flags(name string, args []string) (*flag.FlagSet, error) {
	return o.parse(flag.NewFlagSet(name, flag.ContinueOnError), args)
}

// parse adds the common flags to fs and parses args.
func (o *options) parse(fs *flag.FlagSet, args []string) (*flag.FlagSet, error) {
	fs.StringVar(&o.template, "template", "template.yaml", "SAM template")
	fs.StringVar(&o.state, "state", ".local", "state directory (logs, builds, state.json, endpoints.json)")
	fs.StringVar(&o.prefix, "prefix", "", "prefix of local table and queue names (default onceflow-local)")
	fs.StringVar(&o.envs, "envs", "", "execution environments per function, e.g. Consumer=3,Api=1")
	fs.IntVar(&o.shards, "shards", 1, "shards per DynamoDB stream, records assigned by partition key and processed concurrently, as on AWS")
	fs.BoolVar(&o.ungated, "ungated", false, "without the gatekeeper: nothing authorised (only to measure what it costs)")
	fs.Func("param", "template parameter override Name=Value (repeatable)", func(kv string) error {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			return fmt.Errorf("want Name=Value, got %q", kv)
		}
		if o.params == nil {
			o.params = map[string]string{}
		}
		o.params[k] = v
		return nil
	})
	return fs, fs.Parse(args)
}

// config is the cloud's configuration from the flags, checked against the template: -envs
// names a function by logical id or short name ("ledger"), and every -param must be one the
// template declares with a value its constraints allow. Nothing starts when one is wrong.
func (o *options) config() (localcloud.Config, error) {
	cfg := localcloud.Config{Template: o.template, StateDir: o.state, Prefix: o.prefix, Install: true,
		Environments: map[string]int{}, Parameters: o.params, StreamShards: o.shards, Ungated: o.ungated}
	t, err := localcloud.LoadTemplate(o.template)
	if err != nil {
		return cfg, err
	}
	var errs []error
	for _, kv := range strings.Split(o.envs, ",") {
		if kv == "" {
			continue
		}
		k, v, ok := strings.Cut(kv, "=")
		n, err := strconv.Atoi(v)
		if !ok || err != nil || n < 1 {
			errs = append(errs, fmt.Errorf("-envs %q: want Function=N, N at least 1", kv))
			continue
		}
		id, err := localcloud.ResolveFunction(t.Functions, k)
		if err != nil {
			errs = append(errs, fmt.Errorf("-envs %s: %w", kv, err))
			continue
		}
		cfg.Environments[id] = n
	}
	return cfg, errors.Join(append(errs, t.CheckOverrides(cfg.Environments, cfg.Parameters))...)
}

// serve runs the cloud in the foreground until SIGTERM or SIGINT.
func serve(args []string) error {
	var o options
	if _, err := o.flags("serve", args); err != nil {
		return err
	}
	cfg, err := o.config()
	if err != nil {
		return err
	}
	cfg.Logger = slog.New(slog.NewTextHandler(os.Stderr, nil))
	recv, err := webhookReceiver(&cfg)
	if err != nil {
		return err
	}
	if recv != nil {
		defer recv.Close()
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	cloud, err := localcloud.Start(ctx, cfg)
	if err != nil {
		return err
	}
	if err := cloud.SetSupervisor(os.Getpid()); err != nil {
		return errors.Join(err, cloud.Close())
	}
	cfg.Logger.Info("local cloud ready", "state", cloud.StateDir(), "gatekeeper", cloud.Endpoints().Gatekeeper)
	if !cfg.Ungated {
		go logDenials(ctx, cloud, cfg.Logger)
	}
	<-ctx.Done()
	if !cfg.Ungated {
		cfg.Logger.Info(cloud.Access().Summary())
	}
	cfg.Logger.Info("stopping")
	return cloud.Close()
}

// webhookReceiver starts a loopback webhook receiver that logs every call, and serves its URL
// and signing secret from the local parameter store under the names the template's webhook
// parameters give, unless the template has none.
func webhookReceiver(cfg *localcloud.Config) (*webhooktest.Receiver, error) {
	t, err := localcloud.LoadTemplate(cfg.Template)
	if err != nil || !t.Declares(workload.WebhookURLParameterName) {
		return nil, err
	}
	recv, err := workload.NewReceiver(cfg.Logger)
	if err != nil {
		return nil, err
	}
	if err := workload.ServeWebhookParameters(cfg, cfg.Template, recv); err != nil {
		return nil, errors.Join(err, recv.Close())
	}
	cfg.Logger.Info("webhook receiver on loopback", "url", recv.URL)
	return recv, nil
}

func down(args []string) error {
	var o options
	if _, err := o.flags("down", args); err != nil {
		return err
	}
	stopped, err := localcloud.Stop(o.state)
	switch {
	case len(stopped) > 0:
		fmt.Printf("down: stopped %d processes: %s\n", len(stopped), strings.Join(stopped, ", "))
	case err == nil:
		fmt.Printf("down: nothing was running (no local cloud recorded in %s)\n", o.state)
	}
	return err
}

// functionName resolves a function name of the running cloud (see localcloud.ResolveFunction).
func functionName(ep localcloud.Endpoints, name string) (string, error) {
	ids := make([]string, 0, len(ep.Functions))
	for id := range ep.Functions {
		ids = append(ids, id)
	}
	return localcloud.ResolveFunction(ids, name)
}

// logDenials logs, as they happen (every 2 s until ctx ends), each new refusal of the gatekeeper
// with why, and its counts when a call was denied: what make up shows of refusals, in
// .local/logs/localcloud.log, beside make invoke's.
func logDenials(ctx context.Context, cloud *localcloud.Cloud, log *slog.Logger) {
	shown, denied := 0, 0
	for {
		select {
		case <-ctx.Done():
			return
		case <-time.After(2 * time.Second):
		}
		a := cloud.Access()
		for _, d := range a.Denials[min(shown, len(a.Denials)):] {
			log.Error("DENIED " + d.Explain())
		}
		shown = len(a.Denials)
		if a.Denied != denied {
			log.Warn(a.Summary())
			denied = a.Denied
		}
	}
}
