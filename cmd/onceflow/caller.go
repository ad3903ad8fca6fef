package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/user"
	"strconv"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sts"
)

// awsCaller is who decides on AWS: the ARN of the credentials' principal, as
// sts:GetCallerIdentity answers it (a call every principal may make: no policy grants or
// denies it).
func awsCaller(c *sts.Client) func(context.Context) (string, error) {
	return func(ctx context.Context) (string, error) {
		out, err := c.GetCallerIdentity(ctx, &sts.GetCallerIdentityInput{})
		if err != nil {
			return "", fmt.Errorf("who decides: sts:GetCallerIdentity: %w (or say who with --by)", err)
		}
		if aws.ToString(out.Arn) == "" {
			return "", errors.New("who decides: sts:GetCallerIdentity answered no ARN (say who with --by)")
		}
		return aws.ToString(out.Arn), nil
	}
}

// localCaller is who decides on the local cloud, whose credentials name no person:
// local:USER@HOST, the operating system's user (else $USER, else uid-N) on this host.
func localCaller(context.Context) (string, error) {
	name := os.Getenv("USER")
	if u, err := user.Current(); err == nil && u.Username != "" {
		name = u.Username
	}
	if name == "" {
		name = "uid-" + strconv.Itoa(os.Getuid())
	}
	host, err := os.Hostname()
	if err != nil || host == "" {
		host = "localhost"
	}
	return "local:" + name + "@" + host, nil
}
