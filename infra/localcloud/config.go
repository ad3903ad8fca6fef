package localcloud

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"

	"github.com/onceflow/onceflow/internal/localaws"
)

// The fixed identity of the local cloud (localaws's): the cloud and its clients use it at the
// emulators, which authorise nothing. Functions and pollers call with their own keys through
// the gatekeeper (Endpoints.Principals).
const (
	Region          = localaws.Region
	Account         = localaws.Account
	AccessKeyID     = localaws.AccessKeyID
	SecretAccessKey = localaws.SecretAccessKey
)

// RIEModule is the pinned AWS Lambda Runtime Interface Emulator.
const RIEModule = "github.com/aws/aws-lambda-runtime-interface-emulator/cmd/aws-lambda-rie@v0.0.0-20261030222936-bef5c4ba774d"

// maxStreamShards bounds Config.StreamShards: each shard may run an execution environment.
const maxStreamShards = 64

// Config says what to run and where. The zero value runs template.yaml of the project (the
// module) that holds the working directory, with state in its .local directory; nothing in it
// depends on this repository's checkout.
type Config struct {
	// Root is the project's directory. Default: the directory of Template when it is set, else
	// the nearest directory holding go.mod from the working directory upward, else the
	// working directory.
	Root string
	// Template is the SAM template. Default: Root/template.yaml.
	Template string
	// StateDir holds logs, builds, state.json and endpoints.json. Default: Root/.local.
	StateDir string
	// CacheDir holds what every local cloud of the user shares: the pinned Runtime Interface
	// Emulator and the functions' builds (the engine's emulators have their own,
	// emulator.Install). Default: <os.UserCacheDir()>/onceflow.
	CacheDir string
	// Prefix starts every local table and queue name. Default: "onceflow-local".
	Prefix string
	// Parameters override the template's parameter defaults by name, as `sam deploy
	// --parameter-overrides` does; a parameter without a default must be given here to be
	// referenced.
	Parameters map[string]string
	// SSMParameters are the values functions read from SSM Parameter Store, by parameter
	// name: a loopback stand-in (localaws.ParameterStore) answers their GetParameter calls, which
	// AWS_ENDPOINT_URL_SSM points at. Locally this is where secrets go, never the template.
	SSMParameters map[string]string
	// VisibilityTimeout, when positive, replaces every queue's VisibilityTimeout (seconds), so
	// that a batch left by a crash or a failed invocation is redelivered sooner in demos and
	// tests. It departs from the template: AWS requires at least the function timeout, which
	// is then not checked, and an invocation outliving it sees its messages delivered again.
	VisibilityTimeout int
	// Environments is the number of execution environments per function logical id. Default:
	// 2 for functions with an SQS event source, StreamShards for functions with a DynamoDB
	// stream event source, the stream's shards (at most 4) for functions with a Kinesis event
	// source (Lambda runs one invocation per shard at a time), 1 otherwise.
	Environments map[string]int
	// StreamShards is the number of shards each DynamoDB stream is split into (default 1).
	// DynamoDB Local gives a stream one shard; AWS gives it one per partition, assigns each
	// item to a partition by its partition key, and Lambda processes the shards concurrently,
	// each in order. The local stream poller emulates that: it assigns each record to one of
	// StreamShards virtual shards by a hash of its partition key and delivers the virtual
	// shards concurrently, each with its own batches, retries and failure handling.
	StreamShards int
	// DynamoDBEndpoint and SQSEndpoint, when set, point at emulators already running, which
	// are then neither started nor stopped; so does KinesisEndpoint (kinesalite), which is
	// otherwise started only for a template with AWS::Kinesis::Stream resources.
	DynamoDBEndpoint, SQSEndpoint, KinesisEndpoint string
	// RIE is the aws-lambda-rie binary. Default: CacheDir/aws-lambda-rie@<RIEModule's
	// version>/aws-lambda-rie.
	RIE string
	// Install lets Start install what is missing (the engine's pinned emulators, go install of
	// RIEModule); without it a missing piece is an error that says how to get it.
	Install bool
	// Logger receives the local cloud's own log. Default: discard.
	Logger *slog.Logger
	// CrashAfterInvoke, when set, is asked after every invocation that succeeded; when it
	// returns true the environment is killed and the response dropped, as if it crashed after
	// the function committed its effects and before the caller saw the answer (fault
	// injection: the messages of that batch are redelivered). It must be safe for concurrent use.
	CrashAfterInvoke func(function string) bool
	// Chaos injects faults between the functions and the emulators, and kills environments
	// (see Chaos); every injected fault is counted in Stats.Faults. The zero value injects none.
	Chaos Chaos
	// Ungated runs without the gatekeeper: functions and pollers reach the emulators directly
	// and nothing is authorised, as before the local cloud checked IAM. It exists to measure
	// what the gatekeeper costs (`make run UNGATED=1`); every other run authorises every call.
	Ungated bool
}

func (c Config) withDefaults() (Config, error) {
	if c.Root == "" && c.Template != "" {
		c.Root = filepath.Dir(c.Template)
	}
	if c.Root == "" {
		root, err := moduleRoot()
		if err != nil {
			return c, err
		}
		c.Root = root
	}
	c, err := c.withCache()
	if err != nil {
		return c, err
	}
	if c.Template == "" {
		c.Template = filepath.Join(c.Root, "template.yaml")
	}
	if c.StateDir == "" {
		c.StateDir = filepath.Join(c.Root, ".local")
	}
	if c.Prefix == "" {
		c.Prefix = "onceflow-local"
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	for _, p := range []*string{&c.Root, &c.Template, &c.StateDir} {
		if *p, err = filepath.Abs(*p); err != nil {
			return c, err
		}
	}
	return c, c.Validate()
}

// withCache applies the defaults of CacheDir and RIE, both made absolute.
func (c Config) withCache() (Config, error) {
	if c.CacheDir == "" {
		cache, err := os.UserCacheDir()
		if err != nil {
			return c, fmt.Errorf("cache directory: %w (set Config.CacheDir)", err)
		}
		c.CacheDir = filepath.Join(cache, "onceflow")
	}
	if c.RIE == "" {
		_, version, _ := strings.Cut(RIEModule, "@")
		c.RIE = filepath.Join(c.CacheDir, "aws-lambda-rie@"+version, "aws-lambda-rie")
	}
	var err error
	for _, p := range []*string{&c.CacheDir, &c.RIE} {
		if *p, err = filepath.Abs(*p); err != nil {
			return c, err
		}
	}
	return c, nil
}

// Validate reports every problem of the configuration.
func (c Config) Validate() error {
	var errs []error
	if c.StreamShards < 0 || c.StreamShards > maxStreamShards {
		errs = append(errs, fmt.Errorf("stream shards: %d, want 1 to %d (0 for the default, 1)", c.StreamShards, maxStreamShards))
	}
	for id, n := range c.Environments {
		if n < 1 {
			errs = append(errs, fmt.Errorf("environments of %s: %d, want at least 1", id, n))
		}
	}
	if err := c.Chaos.Validate(); err != nil {
		errs = append(errs, err)
	}
	if _, err := os.Stat(c.Template); err != nil {
		errs = append(errs, fmt.Errorf("template: %w", err))
	}
	return errors.Join(errs...)
}

// moduleRoot is the nearest directory holding go.mod from the working directory upward, else
// the working directory.
func moduleRoot() (string, error) {
	wd, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for dir := wd; ; dir = filepath.Dir(dir) {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		if filepath.Dir(dir) == dir {
			return wd, nil
		}
	}
}
