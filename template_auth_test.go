package onceflow_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/onceflow/onceflow/internal/api"
)

// httpAPI returns the template's one AWS::Serverless::HttpApi and its logical id.
func httpAPI(t *testing.T, tpl doc) (string, doc) {
	t.Helper()
	apis := resourcesOfType(tpl, "AWS::Serverless::HttpApi")
	if len(apis) != 1 {
		t.Fatalf("the template has %d AWS::Serverless::HttpApi; want one, explicit", len(apis))
	}
	for id, a := range apis {
		return id, a
	}
	return "", nil
}

func TestTemplate_http_api_has_a_jwt_authorizer_by_default_on_every_route(t *testing.T) {
	tpl := loadTemplate(t)
	apiID, httpAPI := httpAPI(t, tpl)
	auth := get(httpAPI, "Properties", "Auth")
	name, _ := get(auth, "DefaultAuthorizer").(string)
	authorizer := get(auth, "Authorizers", name)
	if name == "" || authorizer == nil {
		t.Fatalf("%s: Auth.DefaultAuthorizer %q names no authorizer of Auth.Authorizers", apiID, name)
	}
	if src := get(authorizer, "IdentitySource"); src != "$request.header.Authorization" {
		t.Errorf("authorizer %s reads the token from %v; want $request.header.Authorization", name, src)
	}
	// AuthIssuer's default is empty, which a rule refuses (template_deploy_test.go)
	if iss := refTarget(get(authorizer, "JwtConfiguration", "issuer")); iss != "AuthIssuer" || get(tpl, "Parameters", "AuthIssuer", "Default") != "" {
		t.Errorf("authorizer %s: issuer = %v; want !Ref AuthIssuer, a parameter whose default is empty", name, get(authorizer, "JwtConfiguration", "issuer"))
	}
	aud, _ := get(authorizer, "JwtConfiguration", "audience").([]any)
	if len(aud) != 1 || refTarget(aud[0]) != "AuthAudience" {
		t.Errorf("authorizer %s: audience = %v; want [!Ref AuthAudience]", name, aud)
	}
	routes := 0
	for fnID, fn := range resourcesOfType(tpl, "AWS::Serverless::Function") {
		events, _ := get(fn, "Properties", "Events").(doc)
		for evName, ev := range events {
			if get(ev, "Type") != "HttpApi" {
				continue
			}
			routes++
			if target := refTarget(get(ev, "Properties", "ApiId")); target != apiID {
				t.Errorf("%s.%s: ApiId %v; want !Ref %s, or the route lands on an implicit API without the authorizer", fnID, evName, target, apiID)
			}
			if own := get(ev, "Properties", "Auth"); own != nil {
				t.Errorf("%s.%s: Auth %v overrides the default authorizer", fnID, evName, own)
			}
		}
	}
	if routes == 0 {
		t.Fatal("no HttpApi routes found")
	}
	if url := fmt.Sprint(get(tpl, "Outputs", "ApiUrl", "Value")); !strings.Contains(url, "${"+apiID+"}") {
		t.Errorf("output ApiUrl = %s; want the URL of %s", url, apiID)
	}
}

func TestTemplate_http_api_is_throttled_and_logs_every_request(t *testing.T) {
	tpl := loadTemplate(t)
	apiID, httpAPI := httpAPI(t, tpl)
	p := get(httpAPI, "Properties")
	for _, k := range []string{"ThrottlingRateLimit", "ThrottlingBurstLimit"} {
		v := get(p, "DefaultRouteSettings", k)
		param := refTarget(v)
		if param != "" {
			v = get(tpl, "Parameters", param, "Default")
			if min := num(get(tpl, "Parameters", param, "MinValue")); min < 1 {
				t.Errorf("%s: parameter %s allows %d; want a MinValue of at least 1", k, param, min)
			}
		}
		if num(v) < 1 {
			t.Errorf("%s.DefaultRouteSettings.%s = %v; want a positive limit", apiID, k, v)
		}
	}
	logs := refTarget(get(p, "AccessLogSettings", "DestinationArn"))
	if get(tpl, "Resources", logs, "Type") != "AWS::Logs::LogGroup" {
		t.Fatalf("%s: AccessLogSettings.DestinationArn = %v; want !GetAtt of a log group", apiID, get(p, "AccessLogSettings", "DestinationArn"))
	}
	if num(get(tpl, "Resources", logs, "Properties", "RetentionInDays")) < 1 {
		t.Errorf("log group %s keeps access logs forever; want a retention", logs)
	}
	format, _ := get(p, "AccessLogSettings", "Format").(string)
	for _, v := range []string{"$context.requestId", "$context.routeKey", "$context.status", "$context.identity.sourceIp", "$context.authorizer.error"} {
		if !strings.Contains(format, v) {
			t.Errorf("access log format lacks %s: %s", v, format)
		}
	}
}

func TestTemplate_every_api_route_has_an_access_rule(t *testing.T) {
	tpl := loadTemplate(t)
	rules := api.Routes()
	for _, ev := range get(tpl, "Resources", "ApiFunction", "Properties", "Events").(doc) {
		if get(ev, "Type") != "HttpApi" {
			continue
		}
		route := fmt.Sprint(get(ev, "Properties", "Method"), " ", get(ev, "Properties", "Path"))
		if !slices.Contains(rules, route) {
			t.Errorf("route %s has no access rule in internal/api: the function would answer it 404", route)
		}
	}
}
