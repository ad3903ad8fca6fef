package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	awsconfig "github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/feature/ec2/imds"
	"github.com/aws/smithy-go"
)

// config loads the configuration of the SDK's default chain (the environment, the shared
// config and credentials files with their profiles and SSO, a container's credentials) and
// checks that it yields credentials before any call is made: without them the error says, in
// one line, how to give them. The instance metadata service is left out unless f.imds, or
// AWS_EC2_METADATA_DISABLED=false in the environment, asks for it: on a laptop without
// credentials the chain would otherwise end by calling an EC2 endpoint that is not there.
func (f *targetFlags) config(ctx context.Context, getenv func(string) string) (aws.Config, error) {
	var opts []func(*awsconfig.LoadOptions) error
	if f.region != "" {
		opts = append(opts, awsconfig.WithRegion(f.region))
	}
	if !f.imds && getenv("AWS_EC2_METADATA_DISABLED") != "false" {
		opts = append(opts, awsconfig.WithEC2IMDSClientEnableState(imds.ClientDisabled))
	}
	cfg, err := awsconfig.LoadDefaultConfig(ctx, opts...)
	if err != nil {
		return cfg, fmt.Errorf("aws configuration: %w", err)
	}
	if _, err := cfg.Credentials.Retrieve(ctx); err != nil {
		return cfg, noCredentials(err)
	}
	return cfg, nil
}

// noCredentials is the one-line error of a chain that yielded no credentials. When the chain
// ran to its end (the instance metadata service, which config leaves out) nothing was
// configured, and the SDK's error says nothing more; otherwise a source that is configured
// failed (an expired SSO session, a bad profile), and its error follows.
func noCredentials(err error) error {
	const how = "no AWS credentials: set AWS_PROFILE (after `aws sso login` for an SSO profile) or AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or use --local for the local cloud; on EC2, --imds takes the instance role's"
	var op *smithy.OperationError
	if errors.As(err, &op) && op.ServiceID == imds.ServiceID {
		return errors.New(how)
	}
	return fmt.Errorf("%s (%s)", how, oneLine(err.Error(), 300))
}

// localCredentials are what --local signs with: the local cloud's own identity, which every
// emulator takes; with --env-credentials, the environment's static credentials
// (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN), so that the tool acts as the
// principal they name (the operator, whom the local cloud authorises by the OperatorPolicy).
// Credentials the environment holds for AWS are never sent to the local cloud unasked.
func (f *targetFlags) localCredentials(getenv func(string) string) (aws.CredentialsProvider, error) {
	if !f.envCreds {
		return credentials.NewStaticCredentialsProvider("local", "local", ""), nil
	}
	id, secret := getenv("AWS_ACCESS_KEY_ID"), getenv("AWS_SECRET_ACCESS_KEY")
	if id == "" || secret == "" {
		return nil, usageError("--env-credentials: AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY are not both set")
	}
	return credentials.NewStaticCredentialsProvider(id, secret, getenv("AWS_SESSION_TOKEN")), nil
}
