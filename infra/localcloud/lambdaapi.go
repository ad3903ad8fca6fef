package localcloud

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"

	"github.com/onceflow/onceflow/pkg/xray"
)

// lambdaAPI serves the Lambda Invoke API (POST /2015-03-31/functions/{name}/invocations) for
// every function by logical id, through the environment pool, as `sam local start-lambda` does.
type lambdaAPI struct{ cloud *Cloud }

func (l lambdaAPI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path == "/localcloud/stats" {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(l.cloud.Stats())
		return
	}
	name, ok := strings.CutPrefix(r.URL.Path, "/2015-03-31/functions/")
	name, ok2 := strings.CutSuffix(name, "/invocations")
	if !ok || !ok2 || r.Method != http.MethodPost {
		writeJSON404(w)
		return
	}
	if _, found := l.cloud.pools[name]; !found {
		w.Header().Set("X-Amzn-ErrorType", "ResourceNotFoundException")
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusNotFound)
		_, _ = io.WriteString(w, `{"Type":"User","message":"Function not found: `+name+`"}`)
		return
	}
	payload, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	out, err := l.cloud.Invoke(xray.NewContext(r.Context(), r.Header.Get(xray.HTTPHeader)), name, payload)
	var fe *FunctionError
	switch {
	case errors.As(err, &fe):
		out = fe.Payload
		if len(out) == 0 {
			out = []byte(`{"errorType":"` + fe.Type + `","errorMessage":` + quote(fe.Message) + `}`)
		}
		w.Header().Set("X-Amz-Function-Error", "Unhandled")
	case err != nil:
		w.Header().Set("X-Amzn-ErrorType", "ServiceException")
		w.WriteHeader(http.StatusBadGateway)
		_, _ = io.WriteString(w, `{"message":`+quote(err.Error())+`}`)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(out)
}

func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
