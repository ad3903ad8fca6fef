package gatekeeper_test

import (
	"context"
	"crypto/sha256"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awsmiddleware "github.com/aws/aws-sdk-go-v2/aws/middleware"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	ddbtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams"
	"github.com/aws/aws-sdk-go-v2/service/kinesis"
	kinesistypes "github.com/aws/aws-sdk-go-v2/service/kinesis/types"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	s3types "github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/aws/aws-sdk-go-v2/service/ssm"
	"github.com/aws/smithy-go/middleware"
	smithyhttp "github.com/aws/smithy-go/transport/http"

	"github.com/onceflow/onceflow/infra/gatekeeper"
	"github.com/onceflow/onceflow/infra/iam"
)

const (
	region, account = "us-east-1", "000000000000"
	appARN          = "arn:aws:dynamodb:us-east-1:000000000000:table/app"
	idemARN         = "arn:aws:dynamodb:us-east-1:000000000000:table/idem"
	queueURL        = "http://127.0.0.1:4566/000000000000/ledger.fifo"
	queueARN        = "arn:aws:sqs:us-east-1:000000000000:ledger.fifo"
	streamARN       = "arn:aws:dynamodb:us-east-1:000000000000:table/app/stream/2026-12-01T00:00:00.000"
	kinesisARN      = "arn:aws:kinesis:us-east-1:000000000000:stream/clicks"
	consumerARN     = kinesisARN + "/consumer/fan:1796000000"
)

// tables are the key schemas of the tables the cases name.
func tables(_ context.Context, name string) (gatekeeper.Table, error) {
	switch name {
	case "app":
		return gatekeeper.Table{HashKey: "pk", Indexes: map[string]string{"byTag": "tag"}}, nil
	case "idem":
		return gatekeeper.Table{HashKey: "pk"}, nil
	}
	return gatekeeper.Table{}, fmt.Errorf("no table %s", name)
}

// capture is an endpoint that records the authorisations the gatekeeper computes for each
// request an SDK client sends it, and answers them all 200 {} (the client's own parsing of that
// answer does not matter: the request was already captured).
type capture struct {
	g   *gatekeeper.Gatekeeper
	srv *httptest.Server
	mu  sync.Mutex
	got [][]iam.Request
	err []error
	ops []string // the SDK's service package and operation (operationHeader), "" for a request the SDK did not send
}

// operationHeader carries the operation a client of config sends, service package and
// operation name (dynamodbstreams:GetRecords), to the capture.
const operationHeader = "X-Test-Operation"

func newCapture(t *testing.T) *capture {
	t.Helper()
	g, err := gatekeeper.New(gatekeeper.Config{Region: region, Account: account, Table: tables,
		CanonicalARN: func(s string) string { return strings.Replace(s, ":ddblocal:", ":"+region+":", 1) }})
	if err != nil {
		t.Fatal(err)
	}
	c := &capture{g: g}
	c.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		reqs, err := g.Requests(r)
		c.mu.Lock()
		c.got, c.err, c.ops = append(c.got, reqs), append(c.err, err), append(c.ops, r.Header.Get(operationHeader))
		c.mu.Unlock()
		w.Header().Set("Content-Type", "application/x-amz-json-1.0")
		_, _ = io.WriteString(w, "{}")
	}))
	t.Cleanup(c.srv.Close)
	return c
}

// last returns the authorisations of the last request captured, and its operation.
func (c *capture) last(t *testing.T) ([]iam.Request, string) {
	t.Helper()
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.got) == 0 {
		t.Fatal("no request captured")
	}
	if err := c.err[len(c.err)-1]; err != nil {
		t.Fatalf("requests: %v", err)
	}
	return c.got[len(c.got)-1], c.ops[len(c.ops)-1]
}

// config is the SDK configuration of a client of the capture at endpoint: each request says its
// operation in operationHeader.
func config(endpoint string) aws.Config {
	name := middleware.BuildMiddlewareFunc("operationHeader", func(ctx context.Context, in middleware.BuildInput,
		next middleware.BuildHandler) (middleware.BuildOutput, middleware.Metadata, error) {
		if r, ok := in.Request.(*smithyhttp.Request); ok {
			svc := strings.ToLower(strings.ReplaceAll(awsmiddleware.GetServiceID(ctx), " ", ""))
			r.Header.Set(operationHeader, svc+":"+awsmiddleware.GetOperationName(ctx))
		}
		return next.HandleBuild(ctx, in)
	})
	return aws.Config{Region: region, Credentials: credentials.NewStaticCredentialsProvider("AKIDCAPTURE", "secret", ""),
		BaseEndpoint: aws.String(endpoint), RetryMaxAttempts: 1,
		APIOptions: []func(*middleware.Stack) error{func(st *middleware.Stack) error { return st.Build.Add(name, middleware.After) }}}
}

func s(v string) ddbtypes.AttributeValue { return &ddbtypes.AttributeValueMemberS{Value: v} }

type authz struct {
	action, resource string
	keys             []string // dynamodb:LeadingKeys; nil: none
	ctx              map[string][]string
}

func want(reqs ...authz) []authz { return reqs }

func got(reqs []iam.Request) []authz {
	var out []authz
	for _, r := range reqs {
		a := authz{action: r.Action, resource: r.Resource}
		for k, v := range r.Context {
			if k == "dynamodb:leadingkeys" {
				a.keys = append([]string{}, v...)
				continue
			}
			if a.ctx == nil {
				a.ctx = map[string][]string{}
			}
			a.ctx[k] = v
		}
		out = append(out, a)
	}
	return out
}

// sdkCall is one kind of call the code makes, sent by the SDK as the code sends it, and the
// authorisations it needs.
type sdkCall struct {
	name string
	call func() error
	want []authz
}

// sdkCalls are the calls the code makes, one of each kind, through clients of cfg.
func sdkCalls(cfg aws.Config) []sdkCall {
	ctx := context.Background()
	db := dynamodb.NewFromConfig(cfg)
	streams := dynamodbstreams.NewFromConfig(cfg)
	q := sqs.NewFromConfig(cfg)
	s3c := s3.NewFromConfig(cfg, func(o *s3.Options) { o.UsePathStyle = true })
	kin := kinesis.NewFromConfig(cfg)
	params := ssm.NewFromConfig(cfg)
	keyCond, _ := expression.NewBuilder().WithKeyCondition(expression.Key("pk").Equal(expression.Value("ACCOUNT#a-1")).
		And(expression.Key("sk").BeginsWith("ENTRY#"))).Build()
	tagCond, _ := expression.NewBuilder().WithKeyCondition(expression.Key("tag").Equal(expression.Value("travel"))).Build()
	filter, _ := expression.NewBuilder().WithFilter(expression.Name("kind").Equal(expression.Value("outbox"))).Build()
	return []sdkCall{
		{"PutItem", func() error {
			_, err := db.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String("idem"), Item: map[string]ddbtypes.AttributeValue{"pk": s("ledger#ev-1")}})
			return err
		}, want(authz{"dynamodb:PutItem", idemARN, []string{"ledger#ev-1"}, nil})},
		{"GetItem", func() error {
			_, err := db.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String("app"), Key: map[string]ddbtypes.AttributeValue{"pk": s("NOTE#n"), "sk": s("NOTE")}})
			return err
		}, want(authz{"dynamodb:GetItem", appARN, []string{"NOTE#n"}, nil})},
		{"UpdateItem", func() error {
			_, err := db.UpdateItem(ctx, &dynamodb.UpdateItemInput{TableName: aws.String("idem"), Key: map[string]ddbtypes.AttributeValue{"pk": s("#attempts#ledger#ev")},
				UpdateExpression: aws.String("ADD n :one"), ExpressionAttributeValues: map[string]ddbtypes.AttributeValue{":one": &ddbtypes.AttributeValueMemberN{Value: "1"}}})
			return err
		}, want(authz{"dynamodb:UpdateItem", idemARN, []string{"#attempts#ledger#ev"}, nil})},
		{"DeleteItem", func() error {
			_, err := db.DeleteItem(ctx, &dynamodb.DeleteItemInput{TableName: aws.String("idem"), Key: map[string]ddbtypes.AttributeValue{"pk": s("#hold#ledger#a-1")}})
			return err
		}, want(authz{"dynamodb:DeleteItem", idemARN, []string{"#hold#ledger#a-1"}, nil})},
		{"Query with the expression builder: the partition key's equality", func() error {
			_, err := db.Query(ctx, &dynamodb.QueryInput{TableName: aws.String("app"), KeyConditionExpression: keyCond.KeyCondition(),
				ExpressionAttributeNames: keyCond.Names(), ExpressionAttributeValues: keyCond.Values()})
			return err
		}, want(authz{"dynamodb:Query", appARN, []string{"ACCOUNT#a-1"}, nil})},
		{"Query of an index: its ARN, its partition key", func() error {
			_, err := db.Query(ctx, &dynamodb.QueryInput{TableName: aws.String("app"), IndexName: aws.String("byTag"),
				KeyConditionExpression: tagCond.KeyCondition(), ExpressionAttributeNames: tagCond.Names(), ExpressionAttributeValues: tagCond.Values()})
			return err
		}, want(authz{"dynamodb:Query", appARN + "/index/byTag", []string{"travel"}, nil})},
		{"Scan: no leading keys", func() error {
			_, err := db.Scan(ctx, &dynamodb.ScanInput{TableName: aws.String("app"), FilterExpression: filter.Filter(),
				ExpressionAttributeNames: filter.Names(), ExpressionAttributeValues: filter.Values()})
			return err
		}, want(authz{"dynamodb:Scan", appARN, nil, nil})},
		{"TransactWriteItems: each item by its own action", func() error {
			_, err := db.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: []ddbtypes.TransactWriteItem{
				{Update: &ddbtypes.Update{TableName: aws.String("app"), Key: map[string]ddbtypes.AttributeValue{"pk": s("ACCOUNT#a-1"), "sk": s("ACCOUNT")},
					UpdateExpression: aws.String("SET b = :b"), ExpressionAttributeValues: map[string]ddbtypes.AttributeValue{":b": s("1")}}},
				{Put: &ddbtypes.Put{TableName: aws.String("idem"), Item: map[string]ddbtypes.AttributeValue{"pk": s("ledger#ev-1")}}},
				{ConditionCheck: &ddbtypes.ConditionCheck{TableName: aws.String("idem"), Key: map[string]ddbtypes.AttributeValue{"pk": s("#hold#ledger#a-1")},
					ConditionExpression: aws.String("attribute_not_exists(pk)")}},
				{Delete: &ddbtypes.Delete{TableName: aws.String("idem"), Key: map[string]ddbtypes.AttributeValue{"pk": s("#attempts#ledger#ev-1")}}},
			}})
			return err
		}, want(authz{"dynamodb:UpdateItem", appARN, []string{"ACCOUNT#a-1"}, nil}, authz{"dynamodb:PutItem", idemARN, []string{"ledger#ev-1"}, nil},
			authz{"dynamodb:ConditionCheckItem", idemARN, []string{"#hold#ledger#a-1"}, nil}, authz{"dynamodb:DeleteItem", idemARN, []string{"#attempts#ledger#ev-1"}, nil})},
		{"TransactGetItems: GetItem per item", func() error {
			_, err := db.TransactGetItems(ctx, &dynamodb.TransactGetItemsInput{TransactItems: []ddbtypes.TransactGetItem{
				{Get: &ddbtypes.Get{TableName: aws.String("idem"), Key: map[string]ddbtypes.AttributeValue{"pk": s("ledger#ev-1")}}}}})
			return err
		}, want(authz{"dynamodb:GetItem", idemARN, []string{"ledger#ev-1"}, nil})},
		{"BatchWriteItem: one per table, every key", func() error {
			_, err := db.BatchWriteItem(ctx, &dynamodb.BatchWriteItemInput{RequestItems: map[string][]ddbtypes.WriteRequest{
				"idem": {{PutRequest: &ddbtypes.PutRequest{Item: map[string]ddbtypes.AttributeValue{"pk": s("a")}}},
					{DeleteRequest: &ddbtypes.DeleteRequest{Key: map[string]ddbtypes.AttributeValue{"pk": s("b")}}}}}})
			return err
		}, want(authz{"dynamodb:BatchWriteItem", idemARN, []string{"a", "b"}, nil})},
		{"BatchGetItem: one per table, every key", func() error {
			_, err := db.BatchGetItem(ctx, &dynamodb.BatchGetItemInput{RequestItems: map[string]ddbtypes.KeysAndAttributes{
				"app":  {Keys: []map[string]ddbtypes.AttributeValue{{"pk": s("NOTE#1"), "sk": s("NOTE")}}},
				"idem": {Keys: []map[string]ddbtypes.AttributeValue{{"pk": s("x")}}}}})
			return err
		}, want(authz{"dynamodb:BatchGetItem", appARN, []string{"NOTE#1"}, nil}, authz{"dynamodb:BatchGetItem", idemARN, []string{"x"}, nil})},
		{"DescribeTable", func() error {
			_, err := db.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String("app")})
			return err
		}, want(authz{"dynamodb:DescribeTable", appARN, nil, nil})},
		{"ListTables", func() error { _, err := db.ListTables(ctx, &dynamodb.ListTablesInput{}); return err },
			want(authz{"dynamodb:ListTables", "*", nil, nil})},
		{"CreateTable", func() error {
			_, err := db.CreateTable(ctx, &dynamodb.CreateTableInput{TableName: aws.String("app"), KeySchema: []ddbtypes.KeySchemaElement{
				{AttributeName: aws.String("pk"), KeyType: ddbtypes.KeyTypeHash}}, AttributeDefinitions: []ddbtypes.AttributeDefinition{
				{AttributeName: aws.String("pk"), AttributeType: ddbtypes.ScalarAttributeTypeS}}, BillingMode: ddbtypes.BillingModePayPerRequest})
			return err
		}, want(authz{"dynamodb:CreateTable", appARN, nil, nil})},
		{"DeleteTable", func() error {
			_, err := db.DeleteTable(ctx, &dynamodb.DeleteTableInput{TableName: aws.String("app")})
			return err
		}, want(authz{"dynamodb:DeleteTable", appARN, nil, nil})},
		{"UpdateTimeToLive", func() error {
			_, err := db.UpdateTimeToLive(ctx, &dynamodb.UpdateTimeToLiveInput{TableName: aws.String("app"),
				TimeToLiveSpecification: &ddbtypes.TimeToLiveSpecification{AttributeName: aws.String("ttl"), Enabled: aws.Bool(true)}})
			return err
		}, want(authz{"dynamodb:UpdateTimeToLive", appARN, nil, nil})},
		{"DescribeTimeToLive", func() error {
			_, err := db.DescribeTimeToLive(ctx, &dynamodb.DescribeTimeToLiveInput{TableName: aws.String("app")})
			return err
		}, want(authz{"dynamodb:DescribeTimeToLive", appARN, nil, nil})},
		{"Streams DescribeStream: the stream, its region as AWS's", func() error {
			_, err := streams.DescribeStream(ctx, &dynamodbstreams.DescribeStreamInput{StreamArn: aws.String(strings.Replace(streamARN, region, "ddblocal", 1))})
			return err
		}, want(authz{"dynamodb:DescribeStream", streamARN, nil, nil})},
		{"Streams GetShardIterator", func() error {
			_, err := streams.GetShardIterator(ctx, &dynamodbstreams.GetShardIteratorInput{StreamArn: aws.String(streamARN), ShardId: aws.String("shardId-1"),
				ShardIteratorType: "TRIM_HORIZON"})
			return err
		}, want(authz{"dynamodb:GetShardIterator", streamARN, nil, nil})},
		{"Streams GetRecords: the stream its iterator starts with", func() error {
			_, err := streams.GetRecords(ctx, &dynamodbstreams.GetRecordsInput{ShardIterator: aws.String(strings.Replace(streamARN, region, "ddblocal", 1) + "|001|c2hhcmQ=")})
			return err
		}, want(authz{"dynamodb:GetRecords", streamARN, nil, nil})},
		{"Streams ListStreams", func() error { _, err := streams.ListStreams(ctx, &dynamodbstreams.ListStreamsInput{}); return err },
			want(authz{"dynamodb:ListStreams", "*", nil, nil})},
		{"SendMessage", func() error {
			_, err := q.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: aws.String(queueURL), MessageBody: aws.String("x"), MessageGroupId: aws.String("g")})
			return err
		}, want(authz{"sqs:SendMessage", queueARN, nil, nil})},
		{"SendMessageBatch is sqs:SendMessage", func() error {
			_, err := q.SendMessageBatch(ctx, &sqs.SendMessageBatchInput{QueueUrl: aws.String(queueURL),
				Entries: []sqstypes.SendMessageBatchRequestEntry{{Id: aws.String("1"), MessageBody: aws.String("x")}}})
			return err
		}, want(authz{"sqs:SendMessage", queueARN, nil, nil})},
		{"ReceiveMessage", func() error {
			_, err := q.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: aws.String(queueURL)})
			return err
		}, want(authz{"sqs:ReceiveMessage", queueARN, nil, nil})},
		{"DeleteMessage", func() error {
			_, err := q.DeleteMessage(ctx, &sqs.DeleteMessageInput{QueueUrl: aws.String(queueURL), ReceiptHandle: aws.String("r")})
			return err
		}, want(authz{"sqs:DeleteMessage", queueARN, nil, nil})},
		{"DeleteMessageBatch is sqs:DeleteMessage", func() error {
			_, err := q.DeleteMessageBatch(ctx, &sqs.DeleteMessageBatchInput{QueueUrl: aws.String(queueURL),
				Entries: []sqstypes.DeleteMessageBatchRequestEntry{{Id: aws.String("1"), ReceiptHandle: aws.String("r")}}})
			return err
		}, want(authz{"sqs:DeleteMessage", queueARN, nil, nil})},
		{"ChangeMessageVisibility", func() error {
			_, err := q.ChangeMessageVisibility(ctx, &sqs.ChangeMessageVisibilityInput{QueueUrl: aws.String(queueURL), ReceiptHandle: aws.String("r")})
			return err
		}, want(authz{"sqs:ChangeMessageVisibility", queueARN, nil, nil})},
		{"ChangeMessageVisibilityBatch is sqs:ChangeMessageVisibility", func() error {
			_, err := q.ChangeMessageVisibilityBatch(ctx, &sqs.ChangeMessageVisibilityBatchInput{QueueUrl: aws.String(queueURL),
				Entries: []sqstypes.ChangeMessageVisibilityBatchRequestEntry{{Id: aws.String("1"), ReceiptHandle: aws.String("r")}}})
			return err
		}, want(authz{"sqs:ChangeMessageVisibility", queueARN, nil, nil})},
		{"GetQueueAttributes", func() error {
			_, err := q.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{QueueUrl: aws.String(queueURL)})
			return err
		}, want(authz{"sqs:GetQueueAttributes", queueARN, nil, nil})},
		{"GetQueueUrl: the queue by name", func() error {
			_, err := q.GetQueueUrl(ctx, &sqs.GetQueueUrlInput{QueueName: aws.String("ledger.fifo")})
			return err
		}, want(authz{"sqs:GetQueueUrl", queueARN, nil, nil})},
		{"ListQueues", func() error { _, err := q.ListQueues(ctx, &sqs.ListQueuesInput{}); return err },
			want(authz{"sqs:ListQueues", "*", nil, nil})},
		{"ListDeadLetterSourceQueues: the dead-letter queue", func() error {
			_, err := q.ListDeadLetterSourceQueues(ctx, &sqs.ListDeadLetterSourceQueuesInput{QueueUrl: aws.String(queueURL)})
			return err
		}, want(authz{"sqs:ListDeadLetterSourceQueues", queueARN, nil, nil})},
		{"CreateQueue: the queue by name", func() error {
			_, err := q.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String("ledger.fifo")})
			return err
		}, want(authz{"sqs:CreateQueue", queueARN, nil, nil})},
		{"DeleteQueue", func() error {
			_, err := q.DeleteQueue(ctx, &sqs.DeleteQueueInput{QueueUrl: aws.String(queueURL)})
			return err
		}, want(authz{"sqs:DeleteQueue", queueARN, nil, nil})},
		{"S3 GetObject", func() error {
			_, err := s3c.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String("payloads"), Key: aws.String("a/b.json")})
			return err
		}, want(authz{"s3:GetObject", "arn:aws:s3:::payloads/a/b.json", nil, nil})},
		{"S3 HeadObject is s3:GetObject", func() error {
			_, err := s3c.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String("payloads"), Key: aws.String("k")})
			return err
		}, want(authz{"s3:GetObject", "arn:aws:s3:::payloads/k", nil, nil})},
		{"S3 GetObject of a version", func() error {
			_, err := s3c.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String("payloads"), Key: aws.String("k"), VersionId: aws.String("v1")})
			return err
		}, want(authz{"s3:GetObjectVersion", "arn:aws:s3:::payloads/k", nil, nil})},
		{"S3 PutObject", func() error {
			_, err := s3c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("payloads"), Key: aws.String("k"), Body: strings.NewReader("x")})
			return err
		}, want(authz{"s3:PutObject", "arn:aws:s3:::payloads/k", nil, nil})},
		{"S3 CopyObject: put the copy, get the source", func() error {
			_, err := s3c.CopyObject(ctx, &s3.CopyObjectInput{Bucket: aws.String("payloads"), Key: aws.String("k2"), CopySource: aws.String("other/k1")})
			return err
		}, want(authz{"s3:PutObject", "arn:aws:s3:::payloads/k2", nil, nil}, authz{"s3:GetObject", "arn:aws:s3:::other/k1", nil, nil})},
		{"S3 DeleteObject", func() error {
			_, err := s3c.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: aws.String("payloads"), Key: aws.String("k")})
			return err
		}, want(authz{"s3:DeleteObject", "arn:aws:s3:::payloads/k", nil, nil})},
		{"S3 DeleteObjects: DeleteObject per key", func() error {
			_, err := s3c.DeleteObjects(ctx, &s3.DeleteObjectsInput{Bucket: aws.String("payloads"), Delete: &s3types.Delete{
				Objects: []s3types.ObjectIdentifier{{Key: aws.String("a")}, {Key: aws.String("b")}}}})
			return err
		}, want(authz{"s3:DeleteObject", "arn:aws:s3:::payloads/a", nil, nil}, authz{"s3:DeleteObject", "arn:aws:s3:::payloads/b", nil, nil})},
		{"S3 ListObjectsV2 is s3:ListBucket on the bucket, with its prefix", func() error {
			_, err := s3c.ListObjectsV2(ctx, &s3.ListObjectsV2Input{Bucket: aws.String("payloads"), Prefix: aws.String("a/")})
			return err
		}, want(authz{"s3:ListBucket", "arn:aws:s3:::payloads", nil, map[string][]string{"s3:prefix": {"a/"}}})},
		{"S3 HeadBucket is s3:ListBucket", func() error {
			_, err := s3c.HeadBucket(ctx, &s3.HeadBucketInput{Bucket: aws.String("payloads")})
			return err
		}, want(authz{"s3:ListBucket", "arn:aws:s3:::payloads", nil, nil})},
		{"S3 CreateBucket", func() error {
			_, err := s3c.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String("payloads")})
			return err
		}, want(authz{"s3:CreateBucket", "arn:aws:s3:::payloads", nil, nil})},
		{"S3 GetBucketLocation", func() error {
			_, err := s3c.GetBucketLocation(ctx, &s3.GetBucketLocationInput{Bucket: aws.String("payloads")})
			return err
		}, want(authz{"s3:GetBucketLocation", "arn:aws:s3:::payloads", nil, nil})},
		{"Kinesis ListShards by stream name", func() error {
			_, err := kin.ListShards(ctx, &kinesis.ListShardsInput{StreamName: aws.String("clicks")})
			return err
		}, want(authz{"kinesis:ListShards", kinesisARN, nil, nil})},
		{"Kinesis GetShardIterator", func() error {
			_, err := kin.GetShardIterator(ctx, &kinesis.GetShardIteratorInput{StreamName: aws.String("clicks"), ShardId: aws.String("shardId-0"),
				ShardIteratorType: kinesistypes.ShardIteratorTypeTrimHorizon})
			return err
		}, want(authz{"kinesis:GetShardIterator", kinesisARN, nil, nil})},
		{"Kinesis GetRecords of an iterator never handed out: every stream", func() error {
			_, err := kin.GetRecords(ctx, &kinesis.GetRecordsInput{ShardIterator: aws.String("AAAA-unknown")})
			return err
		}, want(authz{"kinesis:GetRecords", "*", nil, nil})},
		{"Kinesis DescribeStream", func() error {
			_, err := kin.DescribeStream(ctx, &kinesis.DescribeStreamInput{StreamName: aws.String("clicks")})
			return err
		}, want(authz{"kinesis:DescribeStream", kinesisARN, nil, nil})},
		{"Kinesis CreateStream", func() error {
			_, err := kin.CreateStream(ctx, &kinesis.CreateStreamInput{StreamName: aws.String("clicks"), ShardCount: aws.Int32(1)})
			return err
		}, want(authz{"kinesis:CreateStream", kinesisARN, nil, nil})},
		{"Kinesis IncreaseStreamRetentionPeriod", func() error {
			_, err := kin.IncreaseStreamRetentionPeriod(ctx, &kinesis.IncreaseStreamRetentionPeriodInput{StreamName: aws.String("clicks"),
				RetentionPeriodHours: aws.Int32(48)})
			return err
		}, want(authz{"kinesis:IncreaseStreamRetentionPeriod", kinesisARN, nil, nil})},
		{"Kinesis PutRecord by stream ARN", func() error {
			_, err := kin.PutRecord(ctx, &kinesis.PutRecordInput{StreamARN: aws.String(kinesisARN), PartitionKey: aws.String("p"), Data: []byte("x")})
			return err
		}, want(authz{"kinesis:PutRecord", kinesisARN, nil, nil})},
		{"Kinesis DescribeStreamConsumer: the consumer's ARN", func() error {
			_, err := kin.DescribeStreamConsumer(ctx, &kinesis.DescribeStreamConsumerInput{ConsumerARN: aws.String(consumerARN)})
			return err
		}, want(authz{"kinesis:DescribeStreamConsumer", consumerARN, nil, nil})},
		{"Kinesis DescribeStreamConsumer by stream and name: the consumer's ARN, its creation time any", func() error {
			_, err := kin.DescribeStreamConsumer(ctx, &kinesis.DescribeStreamConsumerInput{StreamARN: aws.String(kinesisARN), ConsumerName: aws.String("fan")})
			return err
		}, want(authz{"kinesis:DescribeStreamConsumer", kinesisARN + "/consumer/fan:*", nil, nil})},
		{"Kinesis SubscribeToShard: the consumer's ARN", func() error {
			_, err := kin.SubscribeToShard(ctx, &kinesis.SubscribeToShardInput{ConsumerARN: aws.String(consumerARN), ShardId: aws.String("shardId-0"),
				StartingPosition: &kinesistypes.StartingPosition{Type: kinesistypes.ShardIteratorTypeLatest}})
			return err
		}, want(authz{"kinesis:SubscribeToShard", consumerARN, nil, nil})},
		{"Kinesis RegisterStreamConsumer: the stream", func() error {
			_, err := kin.RegisterStreamConsumer(ctx, &kinesis.RegisterStreamConsumerInput{StreamARN: aws.String(kinesisARN), ConsumerName: aws.String("fan")})
			return err
		}, want(authz{"kinesis:RegisterStreamConsumer", kinesisARN, nil, nil})},
		{"SSM GetParameter: the parameter's ARN, its leading slash one", func() error {
			_, err := params.GetParameter(ctx, &ssm.GetParameterInput{Name: aws.String("/onceflow/webhook/url"), WithDecryption: aws.Bool(true)})
			return err
		}, want(authz{"ssm:GetParameter", "arn:aws:ssm:us-east-1:000000000000:parameter/onceflow/webhook/url", nil, nil})},
		{"SSM GetParameters: each parameter", func() error {
			_, err := params.GetParameters(ctx, &ssm.GetParametersInput{Names: []string{"/a", "/b"}})
			return err
		}, want(authz{"ssm:GetParameters", "arn:aws:ssm:us-east-1:000000000000:parameter/a", nil, nil},
			authz{"ssm:GetParameters", "arn:aws:ssm:us-east-1:000000000000:parameter/b", nil, nil})},
	}
}

// Every call the code makes, sent by the SDK as the code sends it, authorised as IAM names it:
// its operation is one the gatekeeper maps, each authorisation one of that operation's actions,
// with only condition keys its action has.
func TestRequests_name_the_IAM_actions_and_resources_of_each_SDK_call(t *testing.T) {
	c := newCapture(t)
	for _, tt := range sdkCalls(config(c.srv.URL)) {
		t.Run(tt.name, func(t *testing.T) {
			_ = tt.call() // the canned answer may not parse: only the request matters
			reqs, op := c.last(t)
			if g := got(reqs); !reflect.DeepEqual(g, tt.want) {
				t.Errorf("authorisations\n  %+v\nwant\n  %+v", g, tt.want)
			}
			names, ok := gatekeeper.OperationActions(op)
			if !ok {
				t.Fatalf("operation %s is not one the gatekeeper maps", op)
			}
			for _, q := range reqs {
				a, ok := gatekeeper.LookupAction(q.Action)
				if !ok || !slices.Contains(names, q.Action) {
					t.Errorf("%s authorised as %s; the gatekeeper maps it as %v", op, q.Action, names)
				}
				for k := range q.Context {
					if !a.Has(k) {
						t.Errorf("%s: condition key %s, which %s does not have (%v)", op, k, q.Action, a.Keys)
					}
				}
			}
		})
	}
}

// SQS's query protocol (the AWS CLI 1.x, older SDKs): the action and queue from the form, or
// the queue from the path the request is sent to.
func TestRequests_read_SQS_query_protocol_requests(t *testing.T) {
	c := newCapture(t)
	tests := []struct {
		name, path string
		form       url.Values
		want       []authz
	}{
		{"SendMessageBatch with QueueUrl", "/", url.Values{"Action": {"SendMessageBatch"}, "QueueUrl": {queueURL}},
			want(authz{"sqs:SendMessage", queueARN, nil, nil})},
		{"ReceiveMessage sent to the queue's URL", "/000000000000/ledger.fifo", url.Values{"Action": {"ReceiveMessage"}},
			want(authz{"sqs:ReceiveMessage", queueARN, nil, nil})},
		{"GetQueueUrl by name and owner", "/", url.Values{"Action": {"GetQueueUrl"}, "QueueName": {"x"}, "QueueOwnerAWSAccountId": {"111122223333"}},
			want(authz{"sqs:GetQueueUrl", "arn:aws:sqs:us-east-1:111122223333:x", nil, nil})},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := signed(t, http.MethodPost, c.srv.URL+tt.path, "sqs", tt.form.Encode(), "application/x-www-form-urlencoded")
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if reqs, _ := c.last(t); !reflect.DeepEqual(got(reqs), tt.want) {
				g := got(reqs)
				t.Errorf("authorisations %+v; want %+v", g, tt.want)
			}
		})
	}
}

// signed is an HTTP request signed with SigV4 by the SDK's signer, as a client would send it.
func signed(t *testing.T, method, url, service, body, contentType string) *http.Request {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", contentType)
	creds := aws.Credentials{AccessKeyID: "AKIDCAPTURE", SecretAccessKey: "secret"}
	hash := fmt.Sprintf("%x", sha256sum(body))
	if err := v4.NewSigner().SignHTTP(context.Background(), creds, req, hash, service, region, time.Now()); err != nil {
		t.Fatal(err)
	}
	return req
}

func sha256sum(s string) []byte {
	h := sha256.Sum256([]byte(s))
	return h[:]
}

// A Query's key condition as DynamoDB accepts it, in any order and shape: the partition key's
// equality gives dynamodb:LeadingKeys whether the name or the value is written first, with or
// without parentheses, beside a sort key's BETWEEN ... AND, in the legacy KeyConditions too.
func TestRequests_name_the_leading_key_of_every_shape_of_Query(t *testing.T) {
	c := newCapture(t)
	db := dynamodb.NewFromConfig(config(c.srv.URL))
	vals := map[string]ddbtypes.AttributeValue{":v": s("ACCOUNT#a-1"), ":lo": s("A"), ":hi": s("B")}
	names := map[string]string{"#p": "pk", "#s": "sk"}
	tests := []struct {
		name, cond string
		names      map[string]string
	}{
		{"name first", "pk = :v", nil},
		{"value first", ":v = pk", nil},
		{"value first, names substituted", ":v = #p", names},
		{"value first, no spaces", ":v=#p", names},
		{"in parentheses beside a sort key's BETWEEN", "(:v = #p) AND #s BETWEEN :lo AND :hi", names},
		{"the sort key first, lower case and", "#s >= :lo and #p = :v", names},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := &dynamodb.QueryInput{TableName: aws.String("app"), KeyConditionExpression: aws.String(tt.cond),
				ExpressionAttributeValues: map[string]ddbtypes.AttributeValue{}}
			for k, v := range vals {
				if strings.Contains(tt.cond, k) {
					in.ExpressionAttributeValues[k] = v
				}
			}
			if tt.names != nil {
				in.ExpressionAttributeNames = map[string]string{}
				for k, v := range tt.names {
					if strings.Contains(tt.cond, k) {
						in.ExpressionAttributeNames[k] = v
					}
				}
			}
			_, _ = db.Query(context.Background(), in)
			if reqs, _ := c.last(t); !reflect.DeepEqual(got(reqs), want(authz{"dynamodb:Query", appARN, []string{"ACCOUNT#a-1"}, nil})) {
				g := got(reqs)
				t.Errorf("%q: authorisations %+v; want the Query with leading key ACCOUNT#a-1", tt.cond, g)
			}
		})
	}
}
