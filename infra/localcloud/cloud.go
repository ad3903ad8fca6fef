package localcloud

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/onceflow/onceflow/infra/gatekeeper"
	"github.com/onceflow/onceflow/internal/localaws"
	"github.com/onceflow/onceflow/pkg/testkit/emulator"
)

// Cloud is a running local cloud. Its methods are safe for concurrent use.
type Cloud struct {
	cfg        Config
	log        *slog.Logger
	tmpl       *Template
	refs       *refs
	ddb        *dynamodb.Client
	sqs        *sqs.Client
	endpoints  Endpoints
	functions  map[string]*Function
	pools      map[string]*pool
	stats      counters
	visibility map[string]int // queue logical id → visibility timeout, seconds
	ssmURL     string         // the loopback parameter store (Config.SSMParameters)
	issuer     *Issuer
	chaos      *chaos // Config.Chaos running, nil without it
	fnDynamoDB string // the endpoints functions get: fault proxies under Config.Chaos
	fnSQS      string
	gate       *gatekeeper.Gatekeeper // nil with Config.Ungated
	pollerGate string                 // the gatekeeper's endpoint for the event source pollers
	api        *apiShim               // the HTTP API's routes, once the servers run

	mu      sync.Mutex
	procs   map[string]*proc // by name; an environment's entry is replaced when it restarts
	order   []string         // names in start order
	servers []*http.Server
	cancel  context.CancelFunc
	wg      sync.WaitGroup
	closed  bool
}

// Start brings the local cloud up from cfg.Template and returns when every emulator,
// resource, execution environment, poller and server is ready. On error everything already
// started is stopped. Close stops it.
func Start(ctx context.Context, cfg Config) (*Cloud, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, fmt.Errorf("local cloud: %w", err)
	}
	c := &Cloud{cfg: cfg, log: cfg.Logger, procs: map[string]*proc{},
		functions: map[string]*Function{}, pools: map[string]*pool{}, visibility: map[string]int{}}
	if err := c.start(ctx); err != nil {
		return nil, errors.Join(fmt.Errorf("local cloud: %w", err), c.Close())
	}
	return c, nil
}

func (c *Cloud) start(ctx context.Context) error {
	for _, dir := range []string{"logs", "build"} {
		if err := os.MkdirAll(filepath.Join(c.cfg.StateDir, dir), 0o755); err != nil {
			return err
		}
	}
	tmpl, err := LoadTemplate(c.cfg.Template)
	if err != nil {
		return err
	}
	if err := tmpl.CheckOverrides(c.cfg.Environments, c.cfg.Parameters); err != nil {
		return err
	}
	removeOldLogs(c.cfg.StateDir, tmpl.Functions)
	c.tmpl = tmpl
	if !c.cfg.Ungated { // what the gatekeeper cannot decide as AWS does stops the cloud before anything starts
		if _, err := plannedPrincipals(tmpl, c.cfg); err != nil {
			return fmt.Errorf("IAM: %w", err)
		}
	}
	if c.refs, err = newRefs(tmpl, c.cfg); err != nil {
		return err
	}
	if err := c.ensureRIE(ctx); err != nil {
		return err
	}
	if err := c.startEmulators(ctx); err != nil {
		return err
	}
	if err := c.startChaos(); err != nil {
		return err
	}
	if err := c.createResources(ctx); err != nil {
		return err
	}
	if c.ssmURL, err = c.serve(localaws.NewParameterStore(c.cfg.SSMParameters)); err != nil {
		return err
	}
	if err := c.startGate(ctx); err != nil {
		return err
	}
	if err := c.startFunctions(ctx); err != nil {
		return err
	}
	runCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	c.cancel = cancel
	if err := c.startPollers(ctx, runCtx); err != nil {
		return err
	}
	if err := c.startServers(); err != nil {
		return err
	}
	c.endpoints.Outputs = c.outputs()
	return writeJSON(filepath.Join(c.cfg.StateDir, "endpoints.json"), c.endpoints)
}

// parameters returns the template's parameter defaults with the overrides applied.
func parameters(defaults, overrides map[string]string) map[string]string {
	out := maps.Clone(defaults)
	if out == nil {
		out = map[string]string{}
	}
	maps.Copy(out, overrides)
	return out
}

func (c *Cloud) startEmulators(ctx context.Context) error {
	e := &c.endpoints
	e.Region, e.DynamoDB, e.SQS, e.Kinesis = Region, c.cfg.DynamoDBEndpoint, c.cfg.SQSEndpoint, c.cfg.KinesisEndpoint
	wantKinesis := e.Kinesis == "" && len(c.tmpl.Kinesis) > 0
	if e.DynamoDB == "" || e.SQS == "" || wantKinesis {
		dir, err := c.ensurePackages(ctx)
		if err != nil {
			return err
		}
		if e.DynamoDB == "" {
			if e.DynamoDB, err = c.startEmulator(ctx, emulator.DynamoDB, dir, dynamoDBReady); err != nil {
				return err
			}
		}
		if e.SQS == "" {
			if e.SQS, err = c.startEmulator(ctx, emulator.SQS, dir, nil); err != nil {
				return err
			}
		}
		if wantKinesis {
			if e.Kinesis, err = c.startEmulator(ctx, emulator.Kinesis, dir, nil); err != nil {
				return err
			}
		}
	}
	// Everything reaches SQS through the proxy that keeps what fauxqs drops (AWSTraceHeader).
	traces, err := newSQSTraces(e.SQS, c.log.Warn)
	if err != nil {
		return err
	}
	if e.SQS, err = c.serve(traces); err != nil {
		return err
	}
	e.Streams = e.DynamoDB
	c.ddb, c.sqs = e.DynamoDBClient(), e.SQSClient()
	return nil
}

func (c *Cloud) createResources(ctx context.Context) error {
	order, err := queueOrder(c.tmpl)
	if err != nil {
		return err
	}
	for _, id := range order {
		if err := c.createQueue(ctx, id); err != nil {
			return err
		}
	}
	for _, id := range c.tmpl.Tables {
		if err := c.createTable(ctx, id); err != nil {
			return err
		}
	}
	if len(c.tmpl.Kinesis) > 0 {
		client := c.endpoints.KinesisClient()
		for _, id := range c.tmpl.Kinesis {
			if err := c.createKinesisStream(ctx, client, id); err != nil {
				return err
			}
		}
		c.endpoints.KinesisStreams = c.refs.kinesis
	}
	c.endpoints.Queues, c.endpoints.Tables = c.refs.queues, c.refs.tables
	return c.createBuckets(ctx)
}

func (c *Cloud) startFunctions(ctx context.Context) error {
	c.endpoints.Functions = map[string][]int{}
	for _, id := range c.tmpl.Functions {
		f, err := c.function(id)
		if err != nil {
			return err
		}
		bootstrap, err := c.build(ctx, f) // one build at a time: go build uses every core
		if err != nil {
			return err
		}
		n, ok := c.cfg.Environments[id]
		if !ok {
			n = 1
			for _, ev := range f.Events {
				switch ev.Type {
				case EventSQS:
					n = 2
				case EventDynamoDB:
					n = max(n, c.cfg.StreamShards)
				case EventKinesis: // one invocation per shard at a time, up to 4 environments
					n = max(n, min(c.kinesisShards(ev.Source), 4))
				}
			}
		}
		p, err := c.startPool(ctx, f, bootstrap, n)
		if err != nil {
			return err
		}
		c.functions[id], c.pools[id] = f, p
		for _, env := range p.envs {
			c.endpoints.Functions[id] = append(c.endpoints.Functions[id], env.proc.pid())
		}
	}
	return nil
}

func (c *Cloud) startPollers(ctx, runCtx context.Context) error {
	for _, id := range c.tmpl.Functions {
		f := c.functions[id]
		timeout := time.Duration(f.Timeout)*time.Second + 5*time.Second
		clients := c.pollerClients(id)
		for _, ev := range f.Events {
			switch ev.Type {
			case EventSQS:
				p := &sqsPoller{function: id, event: ev, queueURL: c.refs.queues[ev.Source].URL,
					sqs: clients.sqs, invoker: c, timeout: timeout, onError: c.log.Warn, count: c.counter(id, ev)}
				for range pollerConcurrency(ev, len(c.pools[id].envs)) {
					c.goRun(func() { p.run(runCtx) })
				}
			case EventDynamoDB:
				p := &streamPoller{streams: clients.streams, streamMapping: c.streamMapping(id, ev, timeout, clients.sqs)}
				if err := p.init(ctx, c.cfg.StreamShards); err != nil {
					return fmt.Errorf("function %s: event %s: %w", id, ev.Name, err)
				}
				c.goRun(func() { p.run(runCtx) })
			case EventKinesis:
				p := &kinesisPoller{kinesis: clients.kinesis, name: c.refs.kinesis[ev.Source].Name,
					streamMapping: c.streamMapping(id, ev, timeout, clients.sqs)}
				if err := p.init(ctx); err != nil {
					return fmt.Errorf("function %s: event %s: %w", id, ev.Name, err)
				}
				c.goRun(func() { p.run(runCtx) })
			}
		}
	}
	return nil
}

// streamMapping is the batch core of a stream event source mapping of function; it sends
// on-failure records with client, as Lambda sends them with the function's execution role.
func (c *Cloud) streamMapping(function string, ev Event, timeout time.Duration, client *sqs.Client) *streamMapping {
	return &streamMapping{function: function, event: ev, invoker: c, timeout: timeout,
		onError: c.log.Warn, count: c.counter(function, ev),
		send: func(ctx context.Context, queueARN, body string) error {
			return c.sendToQueue(ctx, client, queueARN, body)
		}}
}

func (c *Cloud) counter(function string, ev Event) func(func(*MappingStats)) {
	key := function + "/" + ev.Name
	return func(f func(*MappingStats)) { c.stats.mapping(key, f) }
}

// sendToQueue sends a message to a queue of the template by ARN (on-failure destinations).
func (c *Cloud) sendToQueue(ctx context.Context, client *sqs.Client, queueARN, body string) error {
	for _, q := range c.refs.queues {
		if q.ARN == queueARN {
			in := &sqs.SendMessageInput{QueueUrl: aws.String(q.URL), MessageBody: aws.String(body)}
			if strings.HasSuffix(q.Name, ".fifo") {
				in.MessageGroupId, in.MessageDeduplicationId = aws.String("lambda"), aws.String(fmt.Sprint(time.Now().UnixNano()))
			}
			_, err := client.SendMessage(ctx, in)
			return err
		}
	}
	return fmt.Errorf("destination %s is not a queue of the template", queueARN)
}

func (c *Cloud) goRun(f func()) {
	c.wg.Add(1)
	go func() { defer c.wg.Done(); f() }()
}

// startServers starts the Lambda Invoke API, the issuer and, when the template has HttpApi
// events, the API behind it.
func (c *Cloud) startServers() error {
	url, err := c.serve(lambdaAPI{c})
	if err != nil {
		return err
	}
	c.endpoints.LambdaURL = url
	shim := &apiShim{invoker: c, onError: c.log.Warn}
	c.api = shim
	audience := defaultAudience
	for _, id := range c.tmpl.Functions {
		for _, ev := range c.functions[id].Events {
			if ev.Type != EventHTTPAPI {
				continue
			}
			r := newRoute(id, ev)
			if r.auth, err = c.routeAuth(id, ev); err != nil {
				return err
			}
			if r.auth != nil && audience == defaultAudience {
				audience = r.auth.audience[0]
			}
			shim.routes = append(shim.routes, r)
			shim.timeout = max(shim.timeout, time.Duration(c.functions[id].Timeout)*time.Second+5*time.Second)
		}
	}
	l, issuerURL, err := listenLoopback()
	if err != nil {
		return err
	}
	if shim.issuer, err = newIssuer(issuerURL, audience); err != nil {
		_ = l.Close()
		return err
	}
	c.serveOn(l, shim.issuer)
	c.endpoints.Issuer, c.endpoints.TokenURL = issuerURL, issuerURL+"/token"
	c.issuer = shim.issuer
	if len(shim.routes) > 0 {
		if c.endpoints.APIURL, err = c.serve(shim); err != nil {
			return err
		}
	}
	return nil
}

// listenLoopback listens on a free port of 127.0.0.1: nothing the local cloud serves is
// reachable from another machine.
func listenLoopback() (net.Listener, string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, "", err
	}
	return l, "http://" + l.Addr().String(), nil
}

func (c *Cloud) serve(h http.Handler) (string, error) {
	l, url, err := listenLoopback()
	if err != nil {
		return "", err
	}
	c.serveOn(l, h)
	return url, nil
}

func (c *Cloud) serveOn(l net.Listener, h http.Handler) {
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	c.mu.Lock()
	c.servers = append(c.servers, srv)
	c.mu.Unlock()
	go func() { _ = srv.Serve(l) }()
}

// Issuer returns the local OpenID Connect issuer whose tokens the local API accepts.
func (c *Cloud) Issuer() *Issuer { return c.issuer }

// ParameterStoreURL is the loopback SSM GetParameter stand-in the functions read their
// parameters from (AWS_ENDPOINT_URL_SSM); see Config.SSMParameters.
func (c *Cloud) ParameterStoreURL() string { return c.ssmURL }

// Endpoints returns what the cloud offers; the same is in StateDir/endpoints.json.
func (c *Cloud) Endpoints() Endpoints { return c.endpoints }

// Functions returns the functions the cloud runs, by logical id, as resolved from the
// template (environment, events and their sources).
func (c *Cloud) Functions() map[string]Function {
	out := make(map[string]Function, len(c.functions))
	for id, f := range c.functions {
		out[id] = *f
	}
	return out
}

// StateDir returns the directory holding logs, builds, state.json and endpoints.json.
func (c *Cloud) StateDir() string { return c.cfg.StateDir }

// Invoke invokes a function by logical id on one of its idle execution environments (waiting
// for one), as the pollers and the API do. It implements Invoker.
func (c *Cloud) Invoke(ctx context.Context, function string, payload []byte) ([]byte, error) {
	p, ok := c.pools[function]
	if !ok {
		return nil, fmt.Errorf("invoke %s: no such function in the template", function)
	}
	return c.invoke(ctx, p, payload)
}

// Stats returns what the cloud has done so far; the Lambda API serves the same at
// GET LambdaURL + "/localcloud/stats".
func (c *Cloud) Stats() Stats {
	s := c.stats.snapshot()
	s.Faults = c.Faults()
	if c.gate != nil {
		a := c.gate.Stats()
		s.Access = &a
	}
	return s
}

// Kill kills execution environment n (1-based) of a function with SIGKILL, process group and
// all, as a crash would; an invocation in flight on it fails and the pool restarts it.
func (c *Cloud) Kill(function string, n int) error {
	name := fmt.Sprintf("%s-%d", function, n)
	c.mu.Lock()
	p, ok := c.procs[name]
	c.mu.Unlock()
	if !ok {
		return fmt.Errorf("kill %s: no such environment", name)
	}
	return syscall.Kill(-p.pid(), syscall.SIGKILL)
}

// SetSupervisor records pid as the process that runs this cloud, so that Down from another
// process stops it first. The CLI's serve command records itself.
func (c *Cloud) SetSupervisor(pid int) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.saveStateLocked(pid)
}

// removeOldLogs removes the environment logs of an earlier run of these functions, so that
// one with fewer environments leaves none behind.
func removeOldLogs(stateDir string, functions []string) {
	for _, id := range functions {
		for _, path := range LogFiles(stateDir, id) {
			_ = os.Remove(path)
		}
	}
}

// startTracked starts a child process logging to StateDir/logs/<name>.log and records it.
func (c *Cloud) startTracked(name string, cmd *exec.Cmd) (*proc, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return nil, errors.New("local cloud is closed")
	}
	// A process's log starts fresh with the cloud, and continues across its restarts.
	_, restart := c.procs[name]
	p, err := startProc(name, cmd, filepath.Join(c.cfg.StateDir, "logs", name+".log"), !restart)
	if err != nil {
		return nil, err
	}
	if _, ok := c.procs[name]; !ok {
		c.order = append(c.order, name)
	}
	c.procs[name] = p
	return p, c.saveStateLocked(-1)
}

// saveStateLocked writes state.json; supervisor -1 keeps the recorded one.
func (c *Cloud) saveStateLocked(supervisor int) error {
	path := filepath.Join(c.cfg.StateDir, "state.json")
	if supervisor < 0 {
		old, _ := ReadState(c.cfg.StateDir)
		supervisor = old.Supervisor
	}
	s := State{Supervisor: supervisor}
	for _, name := range c.order {
		s.Processes = append(s.Processes, ProcessState{Name: name, PID: c.procs[name].pid()})
	}
	return writeJSON(path, s)
}

// shutdown stops a server: the requests it is serving get a grace of 2 s, then whatever is
// still open (an SQS long poll through a proxy, a client slowed by load) is cut, which is what
// stopping the cloud means, not an error.
func shutdown(s *http.Server) error {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if err := s.Shutdown(ctx); !errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	return s.Close()
}

// Close stops pollers, servers and every process the cloud started, in reverse order.
func (c *Cloud) Close() error {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return nil
	}
	c.closed = true
	servers := c.servers
	c.mu.Unlock()
	if c.cancel != nil {
		c.cancel()
	}
	var errs []error
	for _, s := range servers {
		errs = append(errs, shutdown(s))
	}
	c.wg.Wait()
	c.mu.Lock() // no process starts once closed is set; copy under the lock all the same
	procs := make([]*proc, 0, len(c.order))
	for i := len(c.order) - 1; i >= 0; i-- {
		procs = append(procs, c.procs[c.order[i]])
	}
	c.mu.Unlock()
	for _, p := range procs {
		p.stop(5 * time.Second)
	}
	_ = os.Remove(filepath.Join(c.cfg.StateDir, "state.json"))
	_ = os.Remove(filepath.Join(c.cfg.StateDir, "endpoints.json"))
	return errors.Join(errs...)
}
