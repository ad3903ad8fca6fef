package gatekeeper

import (
	"fmt"
	"slices"
	"strings"

	"github.com/onceflow/onceflow/infra/iam"
)

// Action is an IAM action as the service authorization reference lists it and the gatekeeper
// authorises it: the resource types it is authorised on (a * after a required one, as the
// reference marks it; none for an action on no resource, authorised on "*"), and those of its
// own condition keys (the global ones aside) the gatekeeper computes for a request.
type Action struct {
	Resources []string
	Keys      []string
}

// actions are the IAM actions the gatekeeper authorises, by name: the one table of how IAM
// sees them. A request it computes for another action is refused, never evaluated on a guess;
// TestActions_are_listed_as_the_service_authorization_reference_lists_them holds the table to
// the reference (the simulator's copy of it).
var actions = map[string]Action{
	// DynamoDB and DynamoDB Streams
	"dynamodb:GetItem":            {table, leadingKeys},
	"dynamodb:PutItem":            {table, leadingKeys},
	"dynamodb:UpdateItem":         {table, leadingKeys},
	"dynamodb:DeleteItem":         {table, leadingKeys},
	"dynamodb:ConditionCheckItem": {table, leadingKeys},
	"dynamodb:Query":              {tableOrIndex, leadingKeys},
	"dynamodb:Scan":               {tableOrIndex, nil},
	"dynamodb:BatchGetItem":       {table, leadingKeys},
	"dynamodb:BatchWriteItem":     {table, leadingKeys},
	"dynamodb:DescribeTable":      {table, nil},
	"dynamodb:CreateTable":        {table, nil},
	"dynamodb:DeleteTable":        {table, nil},
	"dynamodb:UpdateTimeToLive":   {table, nil},
	"dynamodb:DescribeTimeToLive": {table, nil},
	"dynamodb:ListTables":         {nil, nil},
	"dynamodb:DescribeLimits":     {nil, nil},
	"dynamodb:DescribeEndpoints":  {nil, nil},
	"dynamodb:DescribeStream":     {stream, nil},
	"dynamodb:GetRecords":         {stream, nil},
	"dynamodb:GetShardIterator":   {stream, nil},
	"dynamodb:ListStreams":        {nil, nil},
	// SQS
	"sqs:SendMessage":                {queue, nil},
	"sqs:ReceiveMessage":             {queue, nil},
	"sqs:DeleteMessage":              {queue, nil},
	"sqs:ChangeMessageVisibility":    {queue, nil},
	"sqs:GetQueueAttributes":         {queue, nil},
	"sqs:GetQueueUrl":                {queue, nil},
	"sqs:ListDeadLetterSourceQueues": {queue, nil},
	"sqs:CreateQueue":                {queue, nil},
	"sqs:DeleteQueue":                {queue, nil},
	"sqs:PurgeQueue":                 {queue, nil},
	"sqs:SetQueueAttributes":         {queue, nil},
	"sqs:StartMessageMoveTask":       {queue, nil},
	"sqs:ListMessageMoveTasks":       {queue, nil},
	"sqs:ListQueues":                 {nil, nil},
	// S3: objects, buckets and the subresources s3Sub names
	"s3:GetObject":                  {object, nil},
	"s3:GetObjectVersion":           {object, nil},
	"s3:PutObject":                  {object, nil},
	"s3:DeleteObject":               {object, nil},
	"s3:DeleteObjectVersion":        {object, nil},
	"s3:GetObjectTagging":           {object, nil},
	"s3:GetObjectVersionTagging":    {object, nil},
	"s3:PutObjectTagging":           {object, nil},
	"s3:PutObjectVersionTagging":    {object, nil},
	"s3:DeleteObjectTagging":        {object, nil},
	"s3:DeleteObjectVersionTagging": {object, nil},
	"s3:GetObjectAcl":               {object, nil},
	"s3:GetObjectVersionAcl":        {object, nil},
	"s3:PutObjectAcl":               {object, nil},
	"s3:GetObjectAttributes":        {object, nil},
	"s3:ListMultipartUploadParts":   {object, nil},
	"s3:AbortMultipartUpload":       {object, nil},
	"s3:RestoreObject":              {object, nil},
	"s3:ListBucket":                 {bucketOrPoint, s3List},
	"s3:ListBucketVersions":         {bucketOrPoint, s3List},
	"s3:GetBucketLocation":          {bucketOrPoint, nil},
	"s3:GetBucketAcl":               {bucketOrPoint, nil},
	"s3:GetBucketCORS":              {bucketOrPoint, nil},
	"s3:GetBucketNotification":      {bucketOrPoint, nil},
	"s3:GetBucketPolicy":            {bucketOrPoint, nil},
	"s3:CreateBucket":               {bucket, nil},
	"s3:DeleteBucket":               {bucket, nil},
	"s3:DeleteBucketPolicy":         {bucket, nil},
	"s3:GetBucketOwnershipControls": {bucket, nil},
	"s3:GetBucketTagging":           {bucket, nil},
	"s3:GetBucketVersioning":        {bucket, nil},
	"s3:GetEncryptionConfiguration": {bucket, nil},
	"s3:GetLifecycleConfiguration":  {bucket, nil},
	"s3:ListBucketMultipartUploads": {bucket, nil},
	"s3:PutBucketAcl":               {bucket, nil},
	"s3:PutBucketCORS":              {bucket, nil},
	"s3:PutBucketNotification":      {bucket, nil},
	"s3:PutBucketOwnershipControls": {bucket, nil},
	"s3:PutBucketPolicy":            {bucket, nil},
	"s3:PutBucketTagging":           {bucket, nil},
	"s3:PutBucketVersioning":        {bucket, nil},
	"s3:PutEncryptionConfiguration": {bucket, nil},
	"s3:PutLifecycleConfiguration":  {bucket, nil},
	"s3:ListAllMyBuckets":           {nil, nil},
	// Kinesis
	"kinesis:GetRecords":                    {kinesisStream, nil},
	"kinesis:GetShardIterator":              {kinesisStream, nil},
	"kinesis:ListShards":                    {kinesisStream, nil},
	"kinesis:DescribeStream":                {kinesisStream, nil},
	"kinesis:DescribeStreamSummary":         {kinesisStream, nil},
	"kinesis:PutRecord":                     {kinesisStream, nil},
	"kinesis:PutRecords":                    {kinesisStream, nil},
	"kinesis:CreateStream":                  {kinesisStream, nil},
	"kinesis:IncreaseStreamRetentionPeriod": {kinesisStream, nil},
	"kinesis:RegisterStreamConsumer":        {kinesisStream, nil},
	"kinesis:ListStreamConsumers":           {kinesisStream, nil},
	"kinesis:DescribeStreamConsumer":        {consumer, nil},
	"kinesis:SubscribeToShard":              {consumer, nil},
	"kinesis:DeregisterStreamConsumer":      {consumer, nil},
	"kinesis:ListStreams":                   {nil, nil},
	// SSM Parameter Store
	"ssm:GetParameter":        {parameter, nil},
	"ssm:GetParameters":       {parameter, nil},
	"ssm:GetParametersByPath": {parameter, nil},
	"ssm:DescribeParameters":  {nil, nil},
}

// The resource types of the actions, as the reference names them (* marks a required one).
var (
	table         = []string{"table*"}
	tableOrIndex  = []string{"index", "table*"}
	stream        = []string{"stream*"}
	queue         = []string{"queue*"}
	object        = []string{"accesspointobject", "object"}
	bucket        = []string{"bucket*"}
	bucketOrPoint = []string{"accesspoint", "bucket"}
	kinesisStream = []string{"stream*"}
	consumer      = []string{"consumer*"}
	parameter     = []string{"parameter*"}
)

// The condition keys the gatekeeper computes: dynamodb:LeadingKeys of the items and keys a
// DynamoDB call names, and a listing's s3:prefix, s3:delimiter and s3:max-keys.
var leadingKeys = []string{"dynamodb:LeadingKeys"}

var s3List = []string{"s3:delimiter", "s3:max-keys", "s3:prefix"}

// operations are the API operations the gatekeeper authorises, by the AWS SDK for Go's service
// package and operation name, each with the IAM actions it is authorised as (a transaction as
// the actions of its items, a batch as its entries' action).
// TestOperations_cover_every_call_the_code_can_send fails on an operation the code can send
// that is not here.
var operations = map[string][]string{
	"dynamodb:GetItem":            {"dynamodb:GetItem"},
	"dynamodb:PutItem":            {"dynamodb:PutItem"},
	"dynamodb:UpdateItem":         {"dynamodb:UpdateItem"},
	"dynamodb:DeleteItem":         {"dynamodb:DeleteItem"},
	"dynamodb:Query":              {"dynamodb:Query"},
	"dynamodb:Scan":               {"dynamodb:Scan"},
	"dynamodb:TransactWriteItems": {"dynamodb:PutItem", "dynamodb:UpdateItem", "dynamodb:DeleteItem", "dynamodb:ConditionCheckItem"},
	"dynamodb:TransactGetItems":   {"dynamodb:GetItem"},
	"dynamodb:BatchGetItem":       {"dynamodb:BatchGetItem"},
	"dynamodb:BatchWriteItem":     {"dynamodb:BatchWriteItem"},
	"dynamodb:DescribeTable":      {"dynamodb:DescribeTable"},
	"dynamodb:CreateTable":        {"dynamodb:CreateTable"},
	"dynamodb:DeleteTable":        {"dynamodb:DeleteTable"},
	"dynamodb:UpdateTimeToLive":   {"dynamodb:UpdateTimeToLive"},
	"dynamodb:DescribeTimeToLive": {"dynamodb:DescribeTimeToLive"},
	"dynamodb:ListTables":         {"dynamodb:ListTables"},
	"dynamodb:DescribeLimits":     {"dynamodb:DescribeLimits"},
	"dynamodb:DescribeEndpoints":  {"dynamodb:DescribeEndpoints"},

	"dynamodbstreams:DescribeStream":   {"dynamodb:DescribeStream"},
	"dynamodbstreams:GetRecords":       {"dynamodb:GetRecords"},
	"dynamodbstreams:GetShardIterator": {"dynamodb:GetShardIterator"},
	"dynamodbstreams:ListStreams":      {"dynamodb:ListStreams"},

	"sqs:SendMessage":                  {"sqs:SendMessage"},
	"sqs:SendMessageBatch":             {"sqs:SendMessage"},
	"sqs:ReceiveMessage":               {"sqs:ReceiveMessage"},
	"sqs:DeleteMessage":                {"sqs:DeleteMessage"},
	"sqs:DeleteMessageBatch":           {"sqs:DeleteMessage"},
	"sqs:ChangeMessageVisibility":      {"sqs:ChangeMessageVisibility"},
	"sqs:ChangeMessageVisibilityBatch": {"sqs:ChangeMessageVisibility"},
	"sqs:GetQueueAttributes":           {"sqs:GetQueueAttributes"},
	"sqs:GetQueueUrl":                  {"sqs:GetQueueUrl"},
	"sqs:ListDeadLetterSourceQueues":   {"sqs:ListDeadLetterSourceQueues"},
	"sqs:CreateQueue":                  {"sqs:CreateQueue"},
	"sqs:DeleteQueue":                  {"sqs:DeleteQueue"},
	"sqs:PurgeQueue":                   {"sqs:PurgeQueue"},
	"sqs:SetQueueAttributes":           {"sqs:SetQueueAttributes"},
	"sqs:StartMessageMoveTask":         {"sqs:StartMessageMoveTask"},
	"sqs:ListMessageMoveTasks":         {"sqs:ListMessageMoveTasks"},
	"sqs:ListQueues":                   {"sqs:ListQueues"},

	"s3:GetObject":         {"s3:GetObject", "s3:GetObjectVersion"},
	"s3:HeadObject":        {"s3:GetObject", "s3:GetObjectVersion"},
	"s3:PutObject":         {"s3:PutObject"},
	"s3:CopyObject":        {"s3:PutObject", "s3:GetObject"},
	"s3:DeleteObject":      {"s3:DeleteObject", "s3:DeleteObjectVersion"},
	"s3:DeleteObjects":     {"s3:DeleteObject", "s3:DeleteObjectVersion"},
	"s3:ListObjectsV2":     {"s3:ListBucket"},
	"s3:ListObjects":       {"s3:ListBucket"},
	"s3:HeadBucket":        {"s3:ListBucket"},
	"s3:CreateBucket":      {"s3:CreateBucket"},
	"s3:GetBucketLocation": {"s3:GetBucketLocation"},
	"s3:ListBuckets":       {"s3:ListAllMyBuckets"},

	"kinesis:GetRecords":                    {"kinesis:GetRecords"},
	"kinesis:GetShardIterator":              {"kinesis:GetShardIterator"},
	"kinesis:ListShards":                    {"kinesis:ListShards"},
	"kinesis:DescribeStream":                {"kinesis:DescribeStream"},
	"kinesis:DescribeStreamSummary":         {"kinesis:DescribeStreamSummary"},
	"kinesis:PutRecord":                     {"kinesis:PutRecord"},
	"kinesis:PutRecords":                    {"kinesis:PutRecords"},
	"kinesis:CreateStream":                  {"kinesis:CreateStream"},
	"kinesis:IncreaseStreamRetentionPeriod": {"kinesis:IncreaseStreamRetentionPeriod"},
	"kinesis:RegisterStreamConsumer":        {"kinesis:RegisterStreamConsumer"},
	"kinesis:ListStreamConsumers":           {"kinesis:ListStreamConsumers"},
	"kinesis:DescribeStreamConsumer":        {"kinesis:DescribeStreamConsumer"},
	"kinesis:SubscribeToShard":              {"kinesis:SubscribeToShard"},
	"kinesis:DeregisterStreamConsumer":      {"kinesis:DeregisterStreamConsumer"},
	"kinesis:ListStreams":                   {"kinesis:ListStreams"},

	"ssm:GetParameter":        {"ssm:GetParameter"},
	"ssm:GetParameters":       {"ssm:GetParameters"},
	"ssm:GetParametersByPath": {"ssm:GetParametersByPath"},
	"ssm:DescribeParameters":  {"ssm:DescribeParameters"},
}

// LookupAction returns how IAM sees action (dynamodb:GetItem), as the gatekeeper maps it.
func LookupAction(name string) (Action, bool) {
	a, ok := actions[name]
	return a, ok
}

// ActionNames returns the IAM actions the gatekeeper maps, sorted.
func ActionNames() []string { return sortedKeys(actions) }

// OperationActions returns the IAM actions the gatekeeper authorises an API operation as, by
// the SDK's service package and operation name (dynamodb:TransactWriteItems); ok is false for
// an operation it does not map.
func OperationActions(operation string) (names []string, ok bool) {
	names, ok = operations[operation]
	return names, ok
}

// Has reports whether the action has condition key k (any case).
func (a Action) Has(k string) bool {
	return slices.ContainsFunc(a.Keys, func(x string) bool { return strings.EqualFold(x, k) })
}

// checkMapped refuses a request for an action the gatekeeper does not map.
func checkMapped(reqs []iam.Request) error {
	for _, q := range reqs {
		if _, ok := actions[q.Action]; !ok {
			return fmt.Errorf("%s is not an action the gatekeeper maps (infra/gatekeeper/actions.go): it is refused rather than decided on a guess", q.Action)
		}
	}
	return nil
}
