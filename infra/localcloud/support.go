package localcloud

// Support says what the local cloud does with a property of a template.
type Support string

const (
	// Emulated is a property the local cloud applies as AWS would (docs/local-cloud.md says where
	// it differs).
	Emulated Support = "emulated"
	// Accepted is a property the local cloud reads past: it changes nothing a function or a
	// client observes locally (encryption at rest, tags, names, retention).
	Accepted Support = "accepted, not emulated"
)

// Supported is what the local cloud runs of a resource type, or of an event source type of
// AWS::Serverless::Function: what it becomes locally and each property it takes. A template
// with a resource of another type, or a property not listed, does not start.
type Supported struct {
	// Type is the resource type ("AWS::SQS::Queue"), or the event type ("SQS") in SupportedEvents.
	Type string
	// Becomes is what the local cloud makes of it, in a few words ("a queue on fauxqs").
	Becomes string
	// Properties are the properties it takes, each emulated or accepted. Nil: the resource is
	// not created locally and every property is accepted (alarms, dashboards, topics).
	Properties map[string]Support
}

// notCreated is Supported.Becomes of a resource type accepted as a whole.
const notCreated = "not created locally"

// props builds a property table: the emulated ones, then the accepted ones.
func props(emulated, accepted []string) map[string]Support {
	m := map[string]Support{}
	for _, p := range emulated {
		m[p] = Emulated
	}
	for _, p := range accepted {
		m[p] = Accepted
	}
	return m
}

// streamEventProperties are the properties of a DynamoDB or Kinesis event source.
func streamEventProperties() map[string]Support {
	return props([]string{"Stream", "StartingPosition", "BatchSize", "FunctionResponseTypes", "FilterCriteria",
		"MaximumRetryAttempts", "MaximumRecordAgeInSeconds", "BisectBatchOnFunctionError", "DestinationConfig", "Enabled"},
		[]string{"MaximumBatchingWindowInSeconds"})
}

// SupportedResources lists every resource type a template the local cloud runs may have, in the
// order docs/local-cloud.md lists them.
var SupportedResources = []Supported{
	{Type: typeFunction, Becomes: "execution environments under the Lambda RIE, the binary built from CodeUri",
		Properties: props([]string{"CodeUri", "Timeout", "MemorySize", "Environment", "LoggingConfig", "Events", "Policies"},
			[]string{"Handler", "Runtime", "Architectures", "Description", "FunctionName", "Tags", "PropagateTags",
				"Tracing", "ReservedConcurrentExecutions", "EphemeralStorage", "RuntimeManagementConfig"})},
	{Type: typeQueue, Becomes: "a queue on fauxqs",
		Properties: props(append(append([]string{}, queueAttributes...), "RedrivePolicy"),
			[]string{"QueueName", "SqsManagedSseEnabled", "RedriveAllowPolicy", "Tags"})},
	{Type: typeTable, Becomes: "a table on DynamoDB Local",
		Properties: props([]string{"KeySchema", "AttributeDefinitions", "BillingMode", "ProvisionedThroughput",
			"GlobalSecondaryIndexes", "LocalSecondaryIndexes", "StreamSpecification", "TimeToLiveSpecification"},
			[]string{"TableName", "PointInTimeRecoverySpecification", "SSESpecification", "DeletionProtectionEnabled",
				"TableClass", "ContributorInsightsSpecification", "Tags"})},
	{Type: typeKinesis, Becomes: "a stream on kinesalite",
		Properties: props([]string{"Name", "ShardCount", "RetentionPeriodHours", "StreamModeDetails"}, []string{"Tags"})},
	{Type: typeBucket, Becomes: "a bucket on fauxqs's S3",
		Properties: props(nil, []string{"BucketName", "BucketEncryption", "LifecycleConfiguration", "OwnershipControls",
			"PublicAccessBlockConfiguration", "Tags"})},
	{Type: typeHTTPAPI, Becomes: "routes on a loopback HTTP server, behind its JWT authorizers",
		Properties: props([]string{"Auth"}, []string{"AccessLogSettings", "DefaultRouteSettings", "RouteSettings",
			"Description", "StageName", "FailOnWarnings", "Tags"})},
	{Type: typeManagedPolicy, Becomes: "a principal of the gatekeeper, a role with this policy alone",
		Properties: props([]string{"PolicyDocument"}, []string{"Description", "ManagedPolicyName", "Path"})},
	{Type: "AWS::CloudWatch::Alarm", Becomes: notCreated},
	{Type: "AWS::CloudWatch::Dashboard", Becomes: notCreated},
	{Type: "AWS::Logs::LogGroup", Becomes: notCreated},
	{Type: "AWS::SNS::Topic", Becomes: notCreated},
	{Type: "AWS::SNS::Subscription", Becomes: notCreated},
	{Type: "AWS::KMS::Key", Becomes: notCreated},
}

// SupportedEvents lists every event source type of AWS::Serverless::Function the local cloud
// runs, with the properties of each.
var SupportedEvents = []Supported{
	{Type: EventSQS, Becomes: "a poller of the queue",
		Properties: props([]string{"Queue", "BatchSize", "FunctionResponseTypes", "ScalingConfig", "ProvisionedPollerConfig",
			"FilterCriteria", "Enabled"}, []string{"MaximumBatchingWindowInSeconds"})},
	{Type: EventDynamoDB, Becomes: "a poller of the table's stream", Properties: streamEventProperties()},
	{Type: EventKinesis, Becomes: "a poller of the stream", Properties: streamEventProperties()},
	{Type: EventHTTPAPI, Becomes: "a route of the loopback HTTP API",
		Properties: props([]string{"Path", "Method", "ApiId", "Auth"}, []string{"TimeoutInMillis", "RouteSettings"})},
}

// BuildMethods are the Metadata.BuildMethod values of a function the local cloud builds ("" is
// none): CodeUri a Go main package, or with makefile the package its build-<LogicalId> target builds.
var BuildMethods = []string{"", "go1.x", "makefile"}

// resourceAttributes are the attributes of a resource beside its Type and Properties that the
// local cloud takes: every other (Condition, CreationPolicy, UpdatePolicy) is refused on a
// resource it creates.
var resourceAttributes = []string{"Type", "Properties", "Metadata", "DependsOn", "DeletionPolicy", "UpdateReplacePolicy"}

// templateSections are the top-level sections of a template the local cloud reads or accepts.
// Rules is accepted and not evaluated: its assertions guard the parameters of a deploy (such as
// an issuer the local cloud replaces with its own).
var templateSections = []string{"AWSTemplateFormatVersion", "Transform", "Description", "Metadata", "Parameters",
	"Rules", "Mappings", "Conditions", "Globals", "Resources", "Outputs"}

// supported returns the entry of typ in list, or nil.
func supported(list []Supported, typ string) *Supported {
	for i := range list {
		if list[i].Type == typ {
			return &list[i]
		}
	}
	return nil
}
