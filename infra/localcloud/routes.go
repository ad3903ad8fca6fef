package localcloud

// Route is one route of the local HTTP API, as its gateway serves it.
type Route struct {
	Key        string   // the routeKey: "GET /notes/{id}"
	Function   string   // logical id of the function it invokes
	Authorizer string   // name of the JWT authorizer it runs behind, "" for none
	Audience   []string // the audiences that authorizer accepts
	Header     string   // the request header holding the token
}

// Routes returns the HTTP API's routes in the order the gateway matches them.
func (c *Cloud) Routes() []Route {
	if c.api == nil {
		return nil
	}
	out := make([]Route, 0, len(c.api.routes))
	for _, r := range c.api.routes {
		rt := Route{Key: r.key, Function: r.function}
		if r.auth != nil {
			rt.Authorizer, rt.Audience, rt.Header = r.auth.name, r.auth.audience, r.auth.header
		}
		out = append(out, rt)
	}
	return out
}
