package localcloud_test

// The fixture functions under testdata/ import the SDK's config loader; go mod tidy does not
// look into testdata, so this import keeps their dependency in go.mod.
import _ "github.com/aws/aws-sdk-go-v2/config"
