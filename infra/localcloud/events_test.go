package localcloud

import "testing"

func TestRoute_match_binds_path_parameters(t *testing.T) {
	get := newRoute("F", Event{Path: "/notes/{id}", Method: "GET"})
	proxy := newRoute("F", Event{Path: "/files/{proxy+}", Method: "ANY"})
	cases := []struct {
		r            route
		method, path string
		ok           bool
		param        string
	}{
		{get, "GET", "/notes/n1", true, "n1"},
		{get, "POST", "/notes/n1", false, ""},
		{get, "GET", "/notes", false, ""},
		{get, "GET", "/notes/n1/x", false, ""},
		{proxy, "PUT", "/files/a/b", true, "a/b"},
	}
	for _, c := range cases {
		params, ok := c.r.match(c.method, c.path)
		if ok != c.ok || (ok && params["id"]+params["proxy"] != c.param) {
			t.Errorf("%s %s on %s = %v %v, want %v %q", c.method, c.path, c.r.key, params, ok, c.ok, c.param)
		}
	}
}

func TestFunctionError_recognises_failed_invocations(t *testing.T) {
	cases := []struct {
		header, payload string
		failed          bool
	}{
		{"", `{"batchItemFailures":[]}`, false},
		{"", `Task timed out after 3.00 seconds`, true},
		{"", `{"errorMessage":"boom","errorType":"errorString"}`, true},
		{"Unhandled", `{}`, true},
		{"", `{"statusCode":200,"body":"errorType"}`, false},
	}
	for _, c := range cases {
		if got := functionError("F", c.header, []byte(c.payload)) != nil; got != c.failed {
			t.Errorf("functionError(%q, %s) failed = %v, want %v", c.header, c.payload, got, c.failed)
		}
	}
}
