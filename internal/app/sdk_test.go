package app_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go/logging"
	"github.com/aws/smithy-go/middleware"

	"github.com/onceflow/onceflow/internal/app"
	"github.com/onceflow/onceflow/internal/localaws"
	"github.com/onceflow/onceflow/pkg/testkit"
)

// functionEnv sets the environment a locally run function sees: the local identity, and
// DynamoDB at endpoint (none: AWS's own).
func functionEnv(t *testing.T, endpoint string) {
	t.Setenv("AWS_REGION", localaws.Region)
	t.Setenv("AWS_ACCESS_KEY_ID", localaws.AccessKeyID)
	t.Setenv("AWS_SECRET_ACCESS_KEY", localaws.SecretAccessKey)
	t.Setenv("AWS_CONFIG_FILE", filepath.Join(t.TempDir(), "none"))
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", filepath.Join(t.TempDir(), "none"))
	t.Setenv("AWS_ENDPOINT_URL", "")
	t.Setenv("AWS_ENDPOINT_URL_DYNAMODB", endpoint)
}

// DynamoDB Local's error responses carry no x-amz-crc32 header, and the SDK then logged
// "failed to close HTTP response body ... response did not match expected checksum" on every
// conditional failure (aws-sdk-go-v2 #3545): every duplicate and rejection alarmed the reader.
func TestNewDynamoDB_conditional_failures_against_DynamoDB_Local_log_no_checksum_warning(t *testing.T) {
	table := testkit.Table(t, testkit.DynamoDB(t), "chk", "pk")
	functionEnv(t, os.Getenv("DYNAMODB_ENDPOINT"))
	var out bytes.Buffer
	ctx := context.Background()
	cfg, err := app.LoadAWS(ctx, app.NewLogger(&out, "debug", "test"))
	if err != nil {
		t.Fatal(err)
	}
	db := app.NewDynamoDB(cfg)
	key := map[string]types.AttributeValue{"pk": &types.AttributeValueMemberS{Value: "k"}}
	_, err = db.PutItem(ctx, &dynamodb.PutItemInput{TableName: &table, Item: key, ConditionExpression: aws.String("attribute_exists(pk)")})
	if ccf := (*types.ConditionalCheckFailedException)(nil); !errors.As(err, &ccf) {
		t.Fatalf("conditional put = %v, want ConditionalCheckFailedException", err)
	}
	_, err = db.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{{
		Put: &types.Put{TableName: &table, Item: key, ConditionExpression: aws.String("attribute_exists(pk)")}}}})
	if tce := (*types.TransactionCanceledException)(nil); !errors.As(err, &tce) {
		t.Fatalf("conditional transaction = %v, want TransactionCanceledException", err)
	}
	if strings.Contains(out.String(), "checksum") || strings.Contains(out.String(), "failed to close") {
		t.Errorf("conditional failures logged a checksum warning:\n%s", out.String())
	}
}

// The response checksum is validated wherever DynamoDB is not on loopback: on AWS it stays.
func TestNewDynamoDB_validates_response_checksums_except_on_loopback(t *testing.T) {
	cases := []struct {
		endpoint string
		validate bool
	}{
		{"", true},
		{"https://dynamodb.us-east-1.amazonaws.com", true},
		{"https://vpce-1a2b3c4d.dynamodb.us-east-1.vpce.amazonaws.com", true},
		{"http://127.0.0.1:8000", false},
		{"http://localhost:8000", false},
		{"http://[::1]:8000", false},
	}
	stop := errors.New("stopped before sending")
	for _, c := range cases {
		t.Run(c.endpoint, func(t *testing.T) {
			functionEnv(t, c.endpoint)
			cfg, err := app.LoadAWS(context.Background(), app.NewLogger(&bytes.Buffer{}, "info", "test"))
			if err != nil {
				t.Fatal(err)
			}
			var validates bool
			cfg.APIOptions = append(cfg.APIOptions, func(s *middleware.Stack) error {
				_, validates = s.Deserialize.Get("DynamoDB:ResponseChecksumValidation")
				return s.Initialize.Add(middleware.InitializeMiddlewareFunc("Stop",
					func(context.Context, middleware.InitializeInput, middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
						return middleware.InitializeOutput{}, middleware.Metadata{}, stop
					}), middleware.Before)
			})
			_, err = app.NewDynamoDB(cfg).ListTables(context.Background(), &dynamodb.ListTablesInput{})
			if !errors.Is(err, stop) {
				t.Fatalf("ListTables = %v, want the test's stop", err)
			}
			if validates != c.validate {
				t.Errorf("response checksum validated = %v, want %v", validates, c.validate)
			}
		})
	}
}

func TestLoadAWS_writes_the_SDKs_lines_as_JSON_records(t *testing.T) {
	functionEnv(t, "")
	var out bytes.Buffer
	cfg, err := app.LoadAWS(context.Background(), app.NewLogger(&out, "info", "onceflow"))
	if err != nil {
		t.Fatal(err)
	}
	cfg.Logger.Logf(logging.Warn, "retry %d of %s", 2, "PutItem")
	recs := records(t, &out)
	if len(recs) != 1 || recs[0]["level"] != "WARN" || recs[0]["message"] != "retry 2 of PutItem" ||
		recs[0]["source"] != "aws-sdk" || recs[0]["timestamp"] == nil {
		t.Errorf("records = %v, want one WARN record with a timestamp, from aws-sdk", recs)
	}
}
