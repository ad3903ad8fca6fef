package localcloud

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/lambda"

	"github.com/onceflow/onceflow/infra/reap"
	"github.com/onceflow/onceflow/pkg/testkit/emulator"
	"github.com/onceflow/onceflow/pkg/xray"
)

// environment is one execution environment: a Runtime Interface Emulator process running one
// function's bootstrap. It takes one invoke at a time; the pool guarantees that.
type environment struct {
	name   string // <LogicalId>-<n>, also its log file name
	proc   *proc
	client *lambda.Client
	rss    peakRSS // its function's peak resident set, read after each invocation
}

// pool holds a function's environments; an idle one waits in free.
type pool struct {
	fn        *Function
	bootstrap string
	envs      []*environment
	free      chan *environment
}

func (c *Cloud) startPool(ctx context.Context, f *Function, bootstrap string, n int) (*pool, error) {
	p := &pool{fn: f, bootstrap: bootstrap, free: make(chan *environment, n)}
	for i := 1; i <= n; i++ {
		env := &environment{name: fmt.Sprintf("%s-%d", f.ID, i)}
		if err := c.startEnv(ctx, p, env); err != nil {
			return nil, err
		}
		p.envs = append(p.envs, env)
		p.free <- env
	}
	return p, nil
}

func (c *Cloud) startEnv(ctx context.Context, p *pool, env *environment) error {
	rie, err := emulator.FreePort()
	if err != nil {
		return err
	}
	api, err := emulator.FreePort()
	for err == nil && api == rie { // two picks at random can meet
		api, err = emulator.FreePort()
	}
	if err != nil {
		return err
	}
	addr := fmt.Sprintf("127.0.0.1:%d", rie)
	cmd := exec.Command(c.cfg.RIE, append([]string{"--runtime-interface-emulator-address", addr,
		"--runtime-api-address", fmt.Sprintf("127.0.0.1:%d", api)}, dieWithParent(p.bootstrap)...)...)
	cmd.Dir = filepath.Dir(p.bootstrap)
	cmd.Env = c.functionEnv(p.fn, cmd.Dir)
	pr, err := c.startTracked(env.name, cmd)
	if err != nil {
		return err
	}
	if err := waitReady(ctx, pr, readyBound, dialProbe(addr)); err != nil {
		// Stopped here: the next start would replace it in c.procs, and nothing else would.
		pr.stop(2 * time.Second)
		return fmt.Errorf("environment %s: %w", env.name, err)
	}
	env.proc = pr
	env.client = newLambdaClient("http://" + addr)
	return nil
}

// dieWithParent is the command that runs bootstrap so that it gets SIGKILL when its parent,
// the Runtime Interface Emulator, ends: the emulator starts it in a process group of its own
// and without a parent-death signal, so that a killed emulator would leave it running.
// setpriv (util-linux) sets the signal and execs bootstrap; without setpriv, bootstrap alone.
func dieWithParent(bootstrap string) []string {
	setpriv, err := exec.LookPath("setpriv")
	if err != nil {
		return []string{bootstrap}
	}
	return []string{setpriv, "--pdeathsig", "KILL", "--", bootstrap}
}

// functionEnv is the environment of a function process: the template's variables, then what
// Lambda sets, then the local identity and emulator endpoints for config.LoadDefaultConfig.
func (c *Cloud) functionEnv(f *Function, taskRoot string) []string {
	env := append([]string{"PATH=" + os.Getenv("PATH"), "TZ=:UTC"}, reap.Marks()...) // a sweep of the run finds it
	for _, k := range sortedKeys(f.Env) {
		env = append(env, k+"="+f.Env[k])
	}
	if f.LogFormat != "" {
		env = append(env, "AWS_LAMBDA_LOG_FORMAT="+f.LogFormat)
	}
	if f.LogLevel != "" {
		env = append(env, "AWS_LAMBDA_LOG_LEVEL="+f.LogLevel)
	}
	ddb, sqs := c.functionEndpoints()
	s3, kin, ssm, streams := c.endpoints.SQS, c.endpoints.Kinesis, c.ssmURL, c.endpoints.Streams // fauxqs serves S3 on its SQS port
	key := AccessKeyID
	if gate := c.endpoints.Gatekeeper; gate != "" { // every call through the gatekeeper, as the function's role
		ddb, sqs, s3, kin, ssm, streams = gate, gate, gate, gate, gate, gate
		key = c.endpoints.Principals[f.ID].AccessKeyID
	}
	return append(env,
		"AWS_LAMBDA_FUNCTION_NAME="+f.ID,
		fmt.Sprintf("AWS_LAMBDA_FUNCTION_TIMEOUT=%d", f.Timeout),
		fmt.Sprintf("AWS_LAMBDA_FUNCTION_MEMORY_SIZE=%d", f.MemorySize),
		"AWS_LAMBDA_FUNCTION_VERSION=$LATEST",
		"LAMBDA_TASK_ROOT="+taskRoot,
		"AWS_REGION="+Region, "AWS_DEFAULT_REGION="+Region,
		"AWS_ACCESS_KEY_ID="+key, "AWS_SECRET_ACCESS_KEY="+SecretAccessKey,
		"AWS_CONFIG_FILE=/dev/null", "AWS_SHARED_CREDENTIALS_FILE=/dev/null",
		"AWS_EC2_METADATA_DISABLED=true",
		"AWS_ENDPOINT_URL_DYNAMODB="+ddb,
		"AWS_ENDPOINT_URL_DYNAMODB_STREAMS="+streams,
		"AWS_ENDPOINT_URL_DYNAMODBSTREAMS="+streams,
		"AWS_ENDPOINT_URL_SQS="+sqs,
		"AWS_ENDPOINT_URL_S3="+s3,
		"AWS_ENDPOINT_URL_KINESIS="+kin,
		"AWS_ENDPOINT_URL_SSM="+ssm,
	)
}

// invoke runs one invocation on an idle environment, restarting it first if its process has
// ended and afterwards if the invocation crashed it. Like Lambda, it gives every invocation a
// trace: the one ctx carries (an API request's, an Invoke call's X-Amzn-Trace-Id), else a new one.
func (c *Cloud) invoke(ctx context.Context, p *pool, payload []byte) ([]byte, error) {
	if xray.FromContext(ctx) == "" {
		ctx = xray.NewContext(ctx, xray.NewHeader(time.Now()))
	}
	var env *environment
	select {
	case env = <-p.free:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	defer func() { p.free <- env }()
	if env.proc.exited() {
		if err := c.restartEnv(ctx, p, env, "process exited"); err != nil {
			return nil, err
		}
	}
	disarm := c.killDuring(env)
	out, err := invokeVia(ctx, env.client, p.fn.ID, "function", payload)
	if disarm() && err == nil {
		err = errors.New("environment killed during the invocation (Config.Chaos)")
	}
	rss := env.rss.read(env.proc.pid())
	c.stats.function(p.fn.ID, func(s *FunctionStats) {
		s.Invocations++
		if err != nil {
			s.Failed++
		}
		s.PeakRSSKiB = max(s.PeakRSSKiB, rss)
	})
	if err == nil && (c.cfg.CrashAfterInvoke != nil && c.cfg.CrashAfterInvoke(p.fn.ID) || c.killAfter()) {
		err = errors.New("environment killed after the invocation returned (Config.CrashAfterInvoke)")
		c.stats.function(p.fn.ID, func(s *FunctionStats) { s.Failed++ })
		_ = syscall.Kill(-env.proc.pid(), syscall.SIGKILL)
	}
	var fe *FunctionError
	switch {
	case err == nil, errors.As(err, &fe):
		return out, err
	case ctx.Err() != nil:
		return nil, err
	}
	// The emulator answered a panic with 502, or died: the environment is gone.
	if rerr := c.restartEnv(ctx, p, env, err.Error()); rerr != nil {
		c.log.Error("restart environment", "env", env.name, "err", rerr)
	}
	return nil, &FunctionError{Function: p.fn.ID, Type: "Crash", Message: err.Error()}
}

func (c *Cloud) restartEnv(ctx context.Context, p *pool, env *environment, reason string) error {
	c.log.Warn("restarting environment", "env", env.name, "reason", reason)
	c.stats.function(p.fn.ID, func(s *FunctionStats) { s.Restarts++ })
	env.proc.stop(2 * time.Second)
	return c.startEnv(ctx, p, env)
}
