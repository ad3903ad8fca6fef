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

func TestParameterStore_takes_PutParameter_of_a_SecureString_as_SSM_does(t *testing.T) {
	store, err := localaws.StartParameterStore(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	client := ssm.NewFromConfig(localaws.Config(), func(o *ssm.Options) { o.BaseEndpoint = aws.String(store.URL) })
	ctx := context.Background()
	put := func(value string, overwrite bool) (*ssm.PutParameterOutput, error) {
		return client.PutParameter(ctx, &ssm.PutParameterInput{Name: aws.String("/app/secret"), Value: aws.String(value),
			Type: types.ParameterTypeSecureString, Overwrite: aws.Bool(overwrite)})
	}
	if out, err := put("one", false); err != nil || out.Version != 1 {
		t.Fatalf("PutParameter of a new name = %+v, %v; want version 1", out, err)
	}
	var exists *types.ParameterAlreadyExists
	if _, err := put("two", false); !errors.As(err, &exists) {
		t.Fatalf("PutParameter of an existing name without Overwrite = %v; want ParameterAlreadyExists", err)
	}
	if out, err := put("two", true); err != nil || out.Version != 2 {
		t.Fatalf("PutParameter with Overwrite = %+v, %v; want version 2", out, err)
	}
	got, err := client.GetParameter(ctx, &ssm.GetParameterInput{Name: aws.String("/app/secret"), WithDecryption: aws.Bool(true)})
	if err != nil || aws.ToString(got.Parameter.Value) != "two" || got.Parameter.Version != 2 {
		t.Fatalf("GetParameter after two puts = %+v, %v; want two at version 2", got, err)
	}
	_, err = client.PutParameter(ctx, &ssm.PutParameterInput{Name: aws.String("/app/plain"), Value: aws.String("x"), Type: types.ParameterTypeString})
	if err == nil {
		t.Fatal("PutParameter of a String was taken; want it refused: the store keeps SecureStrings only")
	}
}
