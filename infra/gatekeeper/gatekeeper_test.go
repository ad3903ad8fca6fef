package gatekeeper_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	ddbtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/kinesis"
	kinesistypes "github.com/aws/aws-sdk-go-v2/service/kinesis/types"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/ssm"
	"github.com/aws/smithy-go"

	"github.com/onceflow/onceflow/infra/gatekeeper"
	"github.com/onceflow/onceflow/infra/iam"
)

const ledgerARN = "arn:aws:sts::000000000000:assumed-role/LedgerFunctionRole/LedgerFunction"

// upstream is a stand-in emulator: it records what reaches it and answers with answer.
type upstream struct {
	srv    *httptest.Server
	mu     sync.Mutex
	bodies [][]byte
	heads  []http.Header
	answer func(w http.ResponseWriter, r *http.Request)
}

func newUpstream(t *testing.T, answer func(w http.ResponseWriter, r *http.Request)) *upstream {
	u := &upstream{answer: answer}
	u.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		u.mu.Lock()
		u.bodies, u.heads = append(u.bodies, b), append(u.heads, r.Header.Clone())
		u.mu.Unlock()
		if u.answer != nil {
			u.answer(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/x-amz-json-1.0")
		_, _ = io.WriteString(w, "{}")
	}))
	t.Cleanup(u.srv.Close)
	return u
}

func (u *upstream) calls() int {
	u.mu.Lock()
	defer u.mu.Unlock()
	return len(u.bodies)
}

// gate is a gatekeeper in front of up for every service, with one principal: the ledger, whose
// policy is statements.
func gate(t *testing.T, up *upstream, statements ...any) (*gatekeeper.Gatekeeper, string) {
	t.Helper()
	pol, err := iam.ParsePolicy("LedgerFunctionRolePolicy0", map[string]any{"Statement": statements})
	if err != nil {
		t.Fatal(err)
	}
	g, err := gatekeeper.New(gatekeeper.Config{Region: region, Account: account, Table: tables,
		Principals: []gatekeeper.Principal{{Name: "LedgerFunction", ARN: ledgerARN, AccessKeyID: "LOCALLedgerFunction", Policies: []iam.Policy{pol}}}})
	if err != nil {
		t.Fatal(err)
	}
	ups := map[string]string{}
	for _, s := range []string{"dynamodb", "sqs", "s3", "kinesis", "ssm"} {
		ups[s] = up.srv.URL
	}
	h, err := g.Handler(ups)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return g, srv.URL
}

func as(key, endpoint string) aws.Config {
	return aws.Config{Region: region, Credentials: credentials.NewStaticCredentialsProvider(key, "local", ""),
		BaseEndpoint: aws.String(endpoint), RetryMaxAttempts: 1}
}

var records = map[string]any{"Effect": "Allow", "Action": []any{"dynamodb:PutItem", "dynamodb:GetItem", "dynamodb:UpdateItem", "dynamodb:DeleteItem"},
	"Resource": idemARN, "Condition": map[string]any{"ForAllValues:StringLike": map[string]any{"dynamodb:LeadingKeys": []any{"ledger#*", "#hold#ledger#*"}}}}

// apiError is the service's error as the SDK reads it: code, message and HTTP status.
func apiError(t *testing.T, err error) (code, message string, status int) {
	t.Helper()
	var ae smithy.APIError
	if !errors.As(err, &ae) {
		t.Fatalf("error %v; want the service's error", err)
	}
	var re *awshttp.ResponseError
	if errors.As(err, &re) {
		status = re.HTTPStatusCode()
	}
	return ae.ErrorCode(), ae.ErrorMessage(), status
}

// The ledger's commit under HoldGroup, with the statement its role had: the ConditionCheck on
// the hold is refused as DynamoDB refuses it, nothing reaches the table, and the refusal is
// counted and names the action.
func TestGatekeeper_refuses_a_transaction_item_its_action_is_not_granted_for(t *testing.T) {
	up := newUpstream(t, nil)
	g, url := gate(t, up, records)
	db := dynamodb.NewFromConfig(as("LOCALLedgerFunction", url))
	_, err := db.TransactWriteItems(context.Background(), &dynamodb.TransactWriteItemsInput{TransactItems: []ddbtypes.TransactWriteItem{
		{Put: &ddbtypes.Put{TableName: aws.String("idem"), Item: map[string]ddbtypes.AttributeValue{"pk": s("ledger#ev-1")}}},
		{ConditionCheck: &ddbtypes.ConditionCheck{TableName: aws.String("idem"), Key: map[string]ddbtypes.AttributeValue{"pk": s("#hold#ledger#a-1")},
			ConditionExpression: aws.String("attribute_not_exists(pk)")}}}})
	code, msg, status := apiError(t, err)
	wantMsg := "User: " + ledgerARN + " is not authorized to perform: dynamodb:ConditionCheckItem on resource: " + idemARN +
		" because no identity-based policy allows the dynamodb:ConditionCheckItem action"
	if code != "AccessDeniedException" || msg != wantMsg || status != 400 {
		t.Errorf("answer %s %q %d; want AccessDeniedException %q 400", code, msg, status, wantMsg)
	}
	if up.calls() != 0 {
		t.Error("the refused transaction reached the table")
	}
	st := g.Stats()
	if st.Denied != 1 || st.Authorized != 0 || len(st.Denials) != 1 || st.Denials[0].Action != "dynamodb:ConditionCheckItem" ||
		!strings.Contains(st.Denials[0].Closest, "LedgerFunctionRolePolicy0 statement 0") {
		t.Errorf("stats %+v; want one denial of dynamodb:ConditionCheckItem, the records' statement the closest", st)
	}
	if !strings.Contains(st.Summary(), "1 denied (LedgerFunction 1): LedgerFunction was refused dynamodb:ConditionCheckItem on "+idemARN) {
		t.Errorf("summary %q; want the denial named", st.Summary())
	}
}

// An allowed call reaches the emulator unchanged: the same body and the caller's signature.
func TestGatekeeper_forwards_an_allowed_call_unchanged(t *testing.T) {
	up := newUpstream(t, nil)
	g, url := gate(t, up, records)
	db := dynamodb.NewFromConfig(as("LOCALLedgerFunction", url))
	var sent []byte
	var auth string
	_, err := db.PutItem(context.Background(), &dynamodb.PutItemInput{TableName: aws.String("idem"), Item: map[string]ddbtypes.AttributeValue{"pk": s("ledger#ev-1")}},
		func(o *dynamodb.Options) {
			o.HTTPClient = recordingClient{func(r *http.Request) {
				sent, _ = io.ReadAll(r.Body)
				r.Body = io.NopCloser(bytes.NewReader(sent))
				auth = r.Header.Get("Authorization")
			}}
		})
	if err != nil {
		t.Fatal(err)
	}
	if up.calls() != 1 || !bytes.Equal(up.bodies[0], sent) || up.heads[0].Get("Authorization") != auth {
		t.Errorf("the emulator got %q (%s); want the request as sent, %q", up.bodies, up.heads[0].Get("Authorization"), sent)
	}
	if st := g.Stats(); st.Authorized != 1 || st.Denied != 0 || st.ByPrincipal["LedgerFunction"].Authorized != 1 {
		t.Errorf("stats %+v; want one call authorised", st)
	}
}

type recordingClient struct{ see func(*http.Request) }

func (c recordingClient) Do(r *http.Request) (*http.Response, error) {
	c.see(r)
	return http.DefaultClient.Do(r)
}

// Each service's refusal as that service answers it, read back by the SDK.
func TestGatekeeper_answers_a_refusal_as_each_service_does(t *testing.T) {
	up := newUpstream(t, nil)
	_, url := gate(t, up, map[string]any{"Effect": "Allow", "Action": "sqs:ReceiveMessage", "Resource": "*"})
	cfg := as("LOCALLedgerFunction", url)
	ctx := context.Background()
	deny := func(action, resource string) string {
		return "User: " + ledgerARN + " is not authorized to perform: " + action + " on resource: " + resource +
			" because no identity-based policy allows the " + action + " action"
	}
	tests := []struct {
		name, code, message string
		status              int
		call                func() error
	}{
		{"SQS (JSON protocol): 403 AccessDenied, the action lower-cased", "AccessDenied", deny("sqs:sendmessage", queueARN), 403, func() error {
			_, err := sqs.NewFromConfig(cfg).SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: aws.String(queueURL), MessageBody: aws.String("x")})
			return err
		}},
		{"S3: 403 AccessDenied, the resource quoted", "AccessDenied", deny("s3:GetObject", `"arn:aws:s3:::payloads/k"`), 403, func() error {
			_, err := s3.NewFromConfig(cfg, func(o *s3.Options) { o.UsePathStyle = true }).GetObject(ctx,
				&s3.GetObjectInput{Bucket: aws.String("payloads"), Key: aws.String("k")})
			return err
		}},
		{"Kinesis: 400 AccessDeniedException", "AccessDeniedException", deny("kinesis:ListShards", kinesisARN), 400, func() error {
			_, err := kinesis.NewFromConfig(cfg).ListShards(ctx, &kinesis.ListShardsInput{StreamName: aws.String("clicks")})
			return err
		}},
		{"SSM: 400 AccessDeniedException", "AccessDeniedException",
			deny("ssm:GetParameter", "arn:aws:ssm:us-east-1:000000000000:parameter/onceflow/webhook/url"), 400, func() error {
				_, err := ssm.NewFromConfig(cfg).GetParameter(ctx, &ssm.GetParameterInput{Name: aws.String("/onceflow/webhook/url")})
				return err
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, msg, status := apiError(t, tt.call())
			if code != tt.code || msg != tt.message || status != tt.status {
				t.Errorf("answer %s %q %d; want %s %q %d", code, msg, status, tt.code, tt.message, tt.status)
			}
		})
	}
	if up.calls() != 0 {
		t.Errorf("%d refused calls reached the emulator", up.calls())
	}
}

// A key no principal has, and a request with no signature, are refused whatever they ask.
func TestGatekeeper_refuses_unknown_and_unsigned_callers(t *testing.T) {
	up := newUpstream(t, nil)
	g, url := gate(t, up, map[string]any{"Effect": "Allow", "Action": "*", "Resource": "*"})
	ctx := context.Background()
	_, err := dynamodb.NewFromConfig(as("local", url)).GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String("idem"),
		Key: map[string]ddbtypes.AttributeValue{"pk": s("x")}})
	if code, _, status := apiError(t, err); code != "UnrecognizedClientException" || status != 400 {
		t.Errorf("DynamoDB with an unknown key: %s %d; want UnrecognizedClientException 400", code, status)
	}
	_, err = sqs.NewFromConfig(as("local", url)).ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: aws.String(queueURL)})
	if code, _, status := apiError(t, err); code != "InvalidClientTokenId" || status != 403 {
		t.Errorf("SQS with an unknown key: %s %d; want InvalidClientTokenId 403", code, status)
	}
	_, err = s3.NewFromConfig(as("local", url), func(o *s3.Options) { o.UsePathStyle = true }).GetObject(ctx,
		&s3.GetObjectInput{Bucket: aws.String("b"), Key: aws.String("k")})
	if code, _, status := apiError(t, err); code != "InvalidAccessKeyId" || status != 403 {
		t.Errorf("S3 with an unknown key: %s %d; want InvalidAccessKeyId 403", code, status)
	}
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(`{"TableName":"idem"}`))
	req.Header.Set("X-Amz-Target", "DynamoDB_20120810.Scan")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 400 || !strings.Contains(string(b), "MissingAuthenticationTokenException") {
		t.Errorf("unsigned: %d %s; want 400 MissingAuthenticationTokenException", resp.StatusCode, b)
	}
	if up.calls() != 0 || g.Stats().ByPrincipal["unknown"].Denied != 4 {
		t.Errorf("%d calls reached the emulator, stats %+v; want none, 4 denied to unknown callers", up.calls(), g.Stats())
	}
}

// A missing object: 404 to a caller who may list the bucket, 403 to one who may not, as S3 keeps
// a bucket's contents from those who cannot list it.
func TestGatekeeper_answers_a_missing_object_403_without_list_rights(t *testing.T) {
	up := newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/xml")
		w.WriteHeader(404)
		_, _ = io.WriteString(w, `<?xml version="1.0"?><Error><Code>NoSuchKey</Code><Message>The specified key does not exist.</Message></Error>`)
	})
	get := map[string]any{"Effect": "Allow", "Action": "s3:GetObject", "Resource": "arn:aws:s3:::payloads/*"}
	list := map[string]any{"Effect": "Allow", "Action": "s3:ListBucket", "Resource": "arn:aws:s3:::payloads"}
	for _, tt := range []struct {
		name       string
		statements []any
		code       string
		status     int
	}{
		{"with s3:ListBucket", []any{get, list}, "NoSuchKey", 404},
		{"without", []any{get}, "AccessDenied", 403},
	} {
		t.Run(tt.name, func(t *testing.T) {
			g, url := gate(t, up, tt.statements...)
			_, err := s3.NewFromConfig(as("LOCALLedgerFunction", url), func(o *s3.Options) { o.UsePathStyle = true }).GetObject(context.Background(),
				&s3.GetObjectInput{Bucket: aws.String("payloads"), Key: aws.String("gone")})
			if code, _, status := apiError(t, err); code != tt.code || status != tt.status {
				t.Errorf("answer %s %d; want %s %d", code, status, tt.code, tt.status)
			}
			if st := g.Stats(); (st.Denied == 1) != (tt.status == 403) || st.Authorized+st.Denied != 1 {
				t.Errorf("stats %+v; want the one call counted denied exactly when answered 403", st)
			}
		})
	}
}

// A Kinesis GetRecords names only its iterator: the gatekeeper authorises it on the stream the
// iterator was handed out for, and the next iterator too.
func TestGatekeeper_authorises_a_Kinesis_iterator_on_its_stream(t *testing.T) {
	up := newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/x-amz-json-1.1")
		switch {
		case strings.HasSuffix(r.Header.Get("X-Amz-Target"), ".GetShardIterator"):
			_, _ = io.WriteString(w, `{"ShardIterator":"it-1"}`)
		case strings.HasSuffix(r.Header.Get("X-Amz-Target"), ".GetRecords"):
			_, _ = io.WriteString(w, `{"Records":[],"NextShardIterator":"it-2","MillisBehindLatest":0}`)
		default:
			_, _ = io.WriteString(w, `{}`)
		}
	})
	_, url := gate(t, up, map[string]any{"Effect": "Allow", "Action": []any{"kinesis:GetShardIterator", "kinesis:GetRecords"}, "Resource": kinesisARN})
	kin := kinesis.NewFromConfig(as("LOCALLedgerFunction", url))
	ctx := context.Background()
	it, err := kin.GetShardIterator(ctx, &kinesis.GetShardIteratorInput{StreamName: aws.String("clicks"), ShardId: aws.String("shardId-0"),
		ShardIteratorType: kinesistypes.ShardIteratorTypeTrimHorizon})
	if err != nil {
		t.Fatal(err)
	}
	out, err := kin.GetRecords(ctx, &kinesis.GetRecordsInput{ShardIterator: it.ShardIterator})
	if err != nil {
		t.Fatalf("GetRecords with the stream's iterator: %v", err)
	}
	if _, err := kin.GetRecords(ctx, &kinesis.GetRecordsInput{ShardIterator: out.NextShardIterator}); err != nil {
		t.Fatalf("GetRecords with the next iterator: %v", err)
	}
	_, err = kin.GetRecords(ctx, &kinesis.GetRecordsInput{ShardIterator: aws.String("it-of-another-stream")})
	if code, msg, _ := apiError(t, err); code != "AccessDeniedException" || !strings.Contains(msg, "kinesis:GetRecords on resource: *") {
		t.Errorf("an iterator never handed out: %s %q; want refused on every stream (*)", code, msg)
	}
}

// A policy that reads a condition key the gatekeeper does not compute is refused at the
// start, rather than evaluated as if the request lacked the key.
func TestNew_refuses_a_policy_reading_a_condition_key_it_does_not_compute(t *testing.T) {
	pol, err := iam.ParsePolicy("P", map[string]any{"Statement": []any{map[string]any{"Effect": "Allow", "Action": "dynamodb:GetItem",
		"Resource": "*", "Condition": map[string]any{"ForAllValues:StringEquals": map[string]any{"dynamodb:Attributes": []any{"pk"}}}}}})
	if err != nil {
		t.Fatal(err)
	}
	_, err = gatekeeper.New(gatekeeper.Config{Principals: []gatekeeper.Principal{{Name: "F", AccessKeyID: "K", Policies: []iam.Policy{pol}}}})
	if err == nil || !strings.Contains(err.Error(), "principal F: policy P statement 0: Condition ForAllValues:StringEquals dynamodb:attributes: the gatekeeper does not compute") {
		t.Errorf("err %v; want the unknown condition key named", err)
	}
}

// A statement limited to the ledger's partitions by ForAllValues:StringLike: a Query of another
// partition is refused however its key condition is written (value first, the vacuous pass of
// a Query with no leading keys), and one whose partition key cannot be read is refused too,
// never authorised with no leading keys.
func TestGatekeeper_refuses_a_Query_of_another_partition_however_its_key_condition_is_written(t *testing.T) {
	up := newUpstream(t, nil)
	query := map[string]any{"Effect": "Allow", "Action": "dynamodb:Query", "Resource": appARN,
		"Condition": map[string]any{"ForAllValues:StringLike": map[string]any{"dynamodb:LeadingKeys": []any{"ledger#*"}}}}
	_, url := gate(t, up, query)
	db := dynamodb.NewFromConfig(as("LOCALLedgerFunction", url))
	for _, tt := range []struct {
		cond, pk string
		allowed  bool
	}{
		{"pk = :v", "ledger#a", true},
		{":v = pk", "ledger#a", true},
		{"pk = :v", "other#a", false},
		{":v = pk", "other#a", false},
		{"(:v = pk)", "other#a", false},
		{"begins_with(sk, :v)", "ledger#a", false}, // no partition key: DynamoDB refuses it, the gatekeeper too
	} {
		_, err := db.Query(context.Background(), &dynamodb.QueryInput{TableName: aws.String("app"), KeyConditionExpression: aws.String(tt.cond),
			ExpressionAttributeValues: map[string]ddbtypes.AttributeValue{":v": s(tt.pk)}})
		if (err == nil) != tt.allowed {
			t.Errorf("Query %q with :v %s: %v; want allowed %v", tt.cond, tt.pk, err, tt.allowed)
		}
	}
}

// aws:PrincipalArn of a role session is the role's ARN, not the session's: a statement
// conditioned on the role allows, one conditioned on the session's ARN does not.
func TestGatekeeper_reads_aws_PrincipalArn_as_the_role_of_the_session(t *testing.T) {
	for _, tt := range []struct {
		op, arn string
		allowed bool
	}{
		{"ArnEquals", "arn:aws:iam::000000000000:role/LedgerFunctionRole", true},
		{"StringEquals", "arn:aws:iam::000000000000:role/LedgerFunctionRole", true},
		{"ArnLike", "arn:aws:iam::000000000000:role/Ledger*", true},
		{"ArnEquals", ledgerARN, false},
		{"StringLike", "arn:aws:sts::000000000000:assumed-role/*", false},
	} {
		up := newUpstream(t, nil)
		_, url := gate(t, up, map[string]any{"Effect": "Allow", "Action": "dynamodb:GetItem", "Resource": idemARN,
			"Condition": map[string]any{tt.op: map[string]any{"aws:PrincipalArn": tt.arn}}})
		_, err := dynamodb.NewFromConfig(as("LOCALLedgerFunction", url)).GetItem(context.Background(), &dynamodb.GetItemInput{
			TableName: aws.String("idem"), Key: map[string]ddbtypes.AttributeValue{"pk": s("ledger#1")}})
		if (err == nil) != tt.allowed {
			t.Errorf("%s aws:PrincipalArn %s: %v; want allowed %v", tt.op, tt.arn, err, tt.allowed)
		}
	}
}
