package samtest

import (
	"context"
	"fmt"
	"maps"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/onceflow/onceflow/infra/localcloud"
)

// Compare runs every comparison of the running local cloud c with the translation r
// resolves, one subtest each: where they differ, the local cloud is wrong.
func Compare(ctx context.Context, t *testing.T, r *Resolver, c *localcloud.Cloud) {
	t.Run("event source mappings", func(t *testing.T) { CompareMappings(t, r.On(t), c) })
	t.Run("functions", func(t *testing.T) { CompareFunctions(t, r.On(t), c) })
	t.Run("queues", func(t *testing.T) { CompareQueues(ctx, t, r.On(t), c.Endpoints()) })
	t.Run("tables", func(t *testing.T) { CompareTables(ctx, t, r.On(t), c.Endpoints()) })
	t.Run("http api", func(t *testing.T) { CompareRoutes(t, r.On(t), c) })
}

// CompareFunctions compares each function's timeout, memory, environment and log format.
func CompareFunctions(t testing.TB, r *Resolver, c *localcloud.Cloud) {
	t.Helper()
	local := c.Functions()
	fns := resourcesOfType(r.doc, "AWS::Lambda::Function")
	if len(fns) != len(local) {
		t.Errorf("the translation deploys %d functions, the local cloud runs %d", len(fns), len(local))
	}
	for id, fn := range fns {
		f, ok := local[id]
		if !ok {
			t.Errorf("%s: not run by the local cloud", id)
			continue
		}
		props := asMap(get(fn, "Properties"))
		p := asMap(r.Resolve(Doc{"Timeout": props["Timeout"], "MemorySize": props["MemorySize"],
			"Environment": props["Environment"], "LoggingConfig": props["LoggingConfig"]}))
		timeout, memory := num(p["Timeout"]), num(p["MemorySize"])
		if timeout == 0 {
			timeout = 3
		}
		if memory == 0 {
			memory = 128
		}
		if f.Timeout != timeout || f.MemorySize != memory {
			t.Errorf("%s: timeout %d s, memory %d MB locally; the translation's are %d s, %d MB", id, f.Timeout, f.MemorySize, timeout, memory)
		}
		env := map[string]string{}
		for k, v := range asMap(get(p, "Environment", "Variables")) {
			env[k] = scalar(v)
		}
		if !maps.Equal(env, f.Env) {
			t.Errorf("%s: environment locally\n  %v\nthe translation's\n  %v", id, f.Env, env)
		}
		format, _ := get(p, "LoggingConfig", "LogFormat").(string)
		if f.LogFormat != format {
			t.Errorf("%s: log format %q locally; the translation's is %q", id, f.LogFormat, format)
		}
	}
}

// CompareRoutes compares the HTTP APIs' routes (the OpenAPI bodies the translator writes)
// with the local gateway's: function, JWT authorizer, audience and token header. The issuer
// is the local one by design.
func CompareRoutes(t testing.TB, r *Resolver, c *localcloud.Cloud) {
	t.Helper()
	var want []localcloud.Route
	fnOf := regexp.MustCompile(`\$\{(\w+)\.Arn\}`)
	for _, api := range resourcesOfType(r.doc, "AWS::ApiGatewayV2::Api") {
		body := get(api, "Properties", "Body")
		schemes := asMap(get(body, "components", "securitySchemes"))
		for path, ops := range asMap(get(body, "paths")) {
			for method, op := range asMap(ops) {
				rt := localcloud.Route{Key: strings.ToUpper(method) + " " + path}
				if m := fnOf.FindStringSubmatch(fmt.Sprint(get(op, "x-amazon-apigateway-integration", "uri", "Fn::Sub"))); m != nil {
					rt.Function = m[1]
				}
				for _, sec := range asList(get(op, "security")) {
					for name := range asMap(sec) {
						az := asMap(get(schemes, name, "x-amazon-apigateway-authorizer"))
						if az == nil {
							continue // "NONE": the route opts out of the API's default authorizer
						}
						rt.Authorizer, rt.Header = name, strings.TrimPrefix(fmt.Sprint(az["identitySource"]), "$request.header.")
						for _, a := range asList(get(az, "jwtConfiguration", "audience")) {
							rt.Audience = append(rt.Audience, scalar(r.Resolve(a)))
						}
					}
				}
				want = append(want, rt)
			}
		}
	}
	got := c.Routes()
	byKey := func(a, b localcloud.Route) int { return strings.Compare(a.Key, b.Key) }
	slices.SortFunc(want, byKey)
	slices.SortFunc(got, byKey)
	if len(want) == 0 || !reflect.DeepEqual(want, got) {
		t.Errorf("routes differ:\ntranslation  %+v\nlocal cloud  %+v", want, got)
	}
}
