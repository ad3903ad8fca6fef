package localaws

import (
	"encoding/json"
	"maps"
	"net"
	"net/http"
	"sync"
	"time"
)

// ParameterStore is the local stand-in for AWS Systems Manager Parameter Store: it answers the
// one call the functions make, GetParameter (with decryption), on loopback, from the values it
// was given, so a function reads its secrets with the same SDK call as in AWS. Every value is
// served as a SecureString; WithDecryption false answers a placeholder, as AWS answers
// ciphertext. It also takes PutParameter of a SecureString, the call that creates one (`make
// webhook-secrets`). It is not an emulator of the rest of SSM. It is safe for concurrent use.
type ParameterStore struct {
	URL string // http://127.0.0.1:port, for AWS_ENDPOINT_URL_SSM or the client's BaseEndpoint

	srv      *http.Server
	mu       sync.Mutex
	values   map[string]string
	versions map[string]int64
}

// NewParameterStore returns a store of values (parameter name to value), not yet serving:
// serve it as an http.Handler, or use StartParameterStore.
func NewParameterStore(values map[string]string) *ParameterStore {
	p := &ParameterStore{values: maps.Clone(values), versions: map[string]int64{}}
	if p.values == nil {
		p.values = map[string]string{}
	}
	for name := range p.values {
		p.versions[name] = 1
	}
	return p
}

// StartParameterStore serves values (parameter name to value) on a free loopback port.
func StartParameterStore(values map[string]string) (*ParameterStore, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	p := NewParameterStore(values)
	p.URL = "http://" + l.Addr().String()
	p.srv = &http.Server{Handler: p, ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = p.srv.Serve(l) }()
	return p, nil
}

// Close stops a store started with StartParameterStore.
func (p *ParameterStore) Close() error {
	if p.srv == nil {
		return nil
	}
	return p.srv.Close()
}

type getParameterInput struct {
	Name           string
	WithDecryption bool
}

type parameter struct {
	Name, Type, Value, ARN, DataType string
	Version                          int64
}

type putParameterInput struct {
	Name, Type, Value string
	Overwrite         bool
}

// ServeHTTP answers SSM's JSON protocol (X-Amz-Target AmazonSSM.GetParameter and PutParameter).
func (p *ParameterStore) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/x-amz-json-1.1")
	switch r.Header.Get("X-Amz-Target") {
	case "AmazonSSM.GetParameter":
		p.get(w, r)
	case "AmazonSSM.PutParameter":
		p.put(w, r)
	default:
		ssmError(w, "UnsupportedOperation", "the local parameter store answers GetParameter and PutParameter only")
	}
}

func (p *ParameterStore) get(w http.ResponseWriter, r *http.Request) {
	var in getParameterInput
	if err := json.NewDecoder(r.Body).Decode(&in); err != nil {
		ssmError(w, "ValidationException", "malformed request")
		return
	}
	p.mu.Lock()
	v, ok := p.values[in.Name]
	version := p.versions[in.Name]
	p.mu.Unlock()
	if !ok {
		ssmError(w, "ParameterNotFound", "no local parameter "+in.Name)
		return
	}
	if !in.WithDecryption {
		v = "(SecureString: ask WithDecryption)"
	}
	_ = json.NewEncoder(w).Encode(map[string]parameter{"Parameter": {Name: in.Name, Type: "SecureString", Value: v,
		ARN: "arn:aws:ssm:" + Region + ":" + Account + ":parameter" + in.Name, DataType: "text", Version: version}})
}

// put stores a SecureString, as SSM does: a new name at version 1, an existing one only with
// Overwrite, at its next version.
func (p *ParameterStore) put(w http.ResponseWriter, r *http.Request) {
	var in putParameterInput
	if err := json.NewDecoder(r.Body).Decode(&in); err != nil || in.Name == "" || in.Value == "" {
		ssmError(w, "ValidationException", "malformed request: a Name and a Value are required")
		return
	}
	if in.Type != "SecureString" {
		ssmError(w, "ValidationException", "the local parameter store keeps SecureStrings only, not "+in.Type)
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if _, ok := p.values[in.Name]; ok && !in.Overwrite {
		ssmError(w, "ParameterAlreadyExists", "The parameter already exists. To overwrite this value, set the overwrite option in the request to true.")
		return
	}
	p.values[in.Name] = in.Value
	p.versions[in.Name]++
	_ = json.NewEncoder(w).Encode(map[string]any{"Version": p.versions[in.Name], "Tier": "Standard"})
}

func ssmError(w http.ResponseWriter, typ, msg string) {
	w.WriteHeader(http.StatusBadRequest)
	_ = json.NewEncoder(w).Encode(map[string]string{"__type": typ, "message": msg})
}
