package localaws_test

import (
	"context"
	"errors"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ssm"
	"github.com/aws/aws-sdk-go-v2/service/ssm/types"

	"github.com/onceflow/onceflow/internal/localaws"
)

func TestParameterStore_answers_GetParameter_as_SSM_does(t *testing.T) {
	store, err := localaws.StartParameterStore(map[string]string{"/app/secret": "s3cr3t"})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	client := ssm.NewFromConfig(localaws.Config(), func(o *ssm.Options) { o.BaseEndpoint = aws.String(store.URL) })
	ctx := context.Background()

	out, err := client.GetParameter(ctx, &ssm.GetParameterInput{Name: aws.String("/app/secret"), WithDecryption: aws.Bool(true)})
	if err != nil || aws.ToString(out.Parameter.Value) != "s3cr3t" || out.Parameter.Type != types.ParameterTypeSecureString {
		t.Fatalf("GetParameter with decryption = %+v, %v; want the SecureString s3cr3t", out, err)
	}
	out, err = client.GetParameter(ctx, &ssm.GetParameterInput{Name: aws.String("/app/secret")})
	if err != nil || aws.ToString(out.Parameter.Value) == "s3cr3t" {
		t.Fatalf("GetParameter without decryption = %+v, %v; want no plaintext", out, err)
	}
	var nf *types.ParameterNotFound
	if _, err := client.GetParameter(ctx, &ssm.GetParameterInput{Name: aws.String("/app/other"), WithDecryption: aws.Bool(true)}); !errors.As(err, &nf) {
		t.Fatalf("GetParameter of an unknown name = %v; want ParameterNotFound", err)
	}
}
