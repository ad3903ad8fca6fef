package app

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ssm"

	"github.com/onceflow/onceflow/internal/config"
	"github.com/onceflow/onceflow/internal/notify"
)

// Parameters is the part of the SSM client the note-notifier uses, once, at init.
type Parameters interface {
	GetParameter(ctx context.Context, in *ssm.GetParameterInput, opts ...func(*ssm.Options)) (*ssm.GetParameterOutput, error)
}

// parameterTimeout bounds reading the webhook's parameters at init.
const parameterTimeout = 10 * time.Second

// webhookConfig reads the webhook URL and signing secret from the SSM parameters cfg names,
// decrypted. Its errors name the parameters, never their values.
func webhookConfig(p Parameters, cfg config.Notifier) (notify.Config, error) {
	if p == nil {
		return notify.Config{}, errors.New("no SSM client to read the webhook parameters with")
	}
	ctx, cancel := context.WithTimeout(context.Background(), parameterTimeout)
	defer cancel()
	url, err := parameter(ctx, p, cfg.WebhookURLParameter)
	if err != nil {
		return notify.Config{}, err
	}
	secret, err := parameter(ctx, p, cfg.WebhookSecretParameter)
	if err != nil {
		return notify.Config{}, err
	}
	return notify.Config{URL: url, Secret: secret}, nil
}

func parameter(ctx context.Context, p Parameters, name string) (string, error) {
	out, err := p.GetParameter(ctx, &ssm.GetParameterInput{Name: aws.String(name), WithDecryption: aws.Bool(true)})
	if err != nil {
		return "", fmt.Errorf("read SSM parameter %s: %w", name, err)
	}
	if out.Parameter == nil || aws.ToString(out.Parameter.Value) == "" {
		return "", fmt.Errorf("SSM parameter %s is empty", name)
	}
	return aws.ToString(out.Parameter.Value), nil
}
