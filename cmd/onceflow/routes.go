package main

import (
	"context"
	"fmt"
	"maps"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/lambda"
	"go.yaml.in/yaml/v3"

	"github.com/onceflow/onceflow/infra/localcloud"
	"github.com/onceflow/onceflow/internal/config"
)

// routes returns the queue URLs of each event type: the --route flags if any, else the
// relay's own: its environment (on AWS, the function's configuration; locally, the
// template's variables with the local cloud's queues) read by the relay's configuration
// loader, so that a republish goes where the relay sends.
func (t *target) routes(ctx context.Context, relay string, flags []string) (map[string][]string, error) {
	if len(flags) > 0 {
		rt := map[string][]string{}
		for _, f := range flags {
			typ, queue, ok := strings.Cut(f, "=")
			if !ok {
				return nil, usageError(fmt.Sprintf("--route %q: want TYPE=QUEUE", f))
			}
			url, err := t.queueURL(ctx, queue)
			if err != nil {
				return nil, err
			}
			rt[typ] = append(rt[typ], url)
		}
		return rt, nil
	}
	env, err := t.relayEnv(ctx, relay)
	if err != nil {
		return nil, err
	}
	cfg, err := config.LoadRelay(func(k string) string { return env[k] })
	if err != nil {
		return nil, fmt.Errorf("the relay's routes: %w", err)
	}
	return cfg.Routes, nil
}

func (t *target) relayEnv(ctx context.Context, relay string) (map[string]string, error) {
	if t.local != nil {
		return localEnv(t.template, relay, *t.local)
	}
	out, err := t.lambda.GetFunctionConfiguration(ctx, &lambda.GetFunctionConfigurationInput{FunctionName: aws.String(relay)})
	if err != nil {
		return nil, fmt.Errorf("read the relay's configuration (or give --route): %w", err)
	}
	if out.Environment == nil {
		return nil, fmt.Errorf("function %s has no environment", relay)
	}
	return maps.Clone(out.Environment.Variables), nil
}

// localEnv is the environment of function fn of the template, with every !Ref to a queue
// resolved to the local cloud's URL of it, and plain values as they are.
func localEnv(template, fn string, e localcloud.Endpoints) (map[string]string, error) {
	tpl, err := localcloud.LoadTemplate(template)
	if err != nil {
		return nil, err
	}
	props, ok := tpl.Properties[fn]
	if !ok {
		return nil, fmt.Errorf("template %s has no function %s", template, fn)
	}
	var fnProps struct {
		Environment struct {
			Variables yaml.Node `yaml:"Variables"`
		} `yaml:"Environment"`
	}
	if err := props.Decode(&fnProps); err != nil {
		return nil, fmt.Errorf("function %s of template %s: %w", fn, template, err)
	}
	env := map[string]string{}
	vars := fnProps.Environment.Variables
	for i := 0; i+1 < len(vars.Content); i += 2 {
		k, v := vars.Content[i].Value, vars.Content[i+1]
		switch q, ok := e.Queues[v.Value]; {
		case v.Tag == "!Ref" && ok:
			env[k] = q.URL
		case v.Tag == "" || v.Tag == "!!str":
			env[k] = v.Value
		}
	}
	return env, nil
}
