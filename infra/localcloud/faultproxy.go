package localcloud

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"time"
)

// faultProxy forwards AWS JSON-protocol requests to an emulator and injects Chaos faults into
// a share of them, with the status, headers and body the real service answers.
type faultProxy struct {
	service string // "dynamodb" or "sqs"
	target  string // the emulator's endpoint, http://host:port
	chaos   *chaos
	client  *http.Client
}

func newFaultProxy(service, target string, c *chaos) *faultProxy {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxIdleConnsPerHost = 64
	return &faultProxy{service: service, target: target, chaos: c, client: &http.Client{Transport: tr}}
}

func (p *faultProxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	if p.chaos.isDown(p.service) {
		p.chaos.count(FaultOutage)
		p.serverError(w)
		return
	}
	op := operation(r.Header.Get("X-Amz-Target"))
	kind := p.chaos.pick(p.service == "dynamodb" && op == "TransactWriteItems")
	if kind != "" && kind != FaultResetAfter {
		p.chaos.count(kind)
	}
	switch kind {
	case FaultResetBefore:
		reset(w)
		return
	case FaultThrottle:
		p.throttle(w)
		return
	case FaultServerError:
		p.serverError(w)
		return
	case FaultConflict:
		writeAWSError(w, http.StatusBadRequest, "", conflictBody(body))
		return
	case FaultLatency:
		time.Sleep(p.chaos.duration(p.chaos.cfg.MaxLatency))
	}
	status, header, answer, err := p.forward(r, body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	if kind == FaultResetAfter {
		p.chaos.count(kind) // counted once the emulator has applied the request
		reset(w)
		return
	}
	for k, v := range header {
		w.Header()[k] = v
	}
	w.WriteHeader(status)
	_, _ = w.Write(answer)
}

// forward sends the request to the emulator and reads its whole answer.
func (p *faultProxy) forward(r *http.Request, body []byte) (int, http.Header, []byte, error) {
	req, err := http.NewRequestWithContext(r.Context(), r.Method, p.target+r.URL.RequestURI(), bytes.NewReader(body))
	if err != nil {
		return 0, nil, nil, err
	}
	req.Header = r.Header.Clone()
	resp, err := p.client.Do(req)
	if err != nil {
		return 0, nil, nil, fmt.Errorf("forward to %s: %w", p.service, err)
	}
	defer resp.Body.Close()
	answer, err := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, answer, err
}

// operation is the operation of an X-Amz-Target header (DynamoDB_20120810.PutItem → PutItem).
func operation(target string) string {
	_, op, _ := strings.Cut(target, ".")
	return op
}

func (p *faultProxy) throttle(w http.ResponseWriter) {
	if p.service == "sqs" {
		writeAWSError(w, http.StatusBadRequest, "RequestThrottled;Sender",
			awsError("com.amazonaws.sqs#RequestThrottled", "Request is throttled."))
		return
	}
	typ, msg := "ThrottlingException", "Rate of requests exceeds the allowed throughput."
	if p.chaos.float() < 0.5 {
		typ, msg = "ProvisionedThroughputExceededException",
			"The level of configured provisioned throughput for the table was exceeded. Consider increasing your provisioning level with the UpdateTable API."
	}
	writeAWSError(w, http.StatusBadRequest, "", awsError("com.amazonaws.dynamodb.v20120810#"+typ, msg))
}

func (p *faultProxy) serverError(w http.ResponseWriter) {
	if p.service == "sqs" {
		writeAWSError(w, http.StatusInternalServerError, "InternalFailure;Receiver",
			awsError("com.amazonaws.sqs#InternalFailure", "The request processing has failed because of an unknown error, exception or failure."))
		return
	}
	writeAWSError(w, http.StatusInternalServerError, "",
		awsError("com.amazonaws.dynamodb.v20120810#InternalServerError", "Internal server error"))
}

func awsError(typ, msg string) []byte {
	b, _ := json.Marshal(map[string]string{"__type": typ, "message": msg})
	return b
}

// conflictBody is DynamoDB's TransactionCanceledException for a TransactWriteItems request:
// one reason per item, the last one a TransactionConflict, the others None.
func conflictBody(request []byte) []byte {
	var in struct{ TransactItems []json.RawMessage }
	_ = json.Unmarshal(request, &in)
	n := max(len(in.TransactItems), 1)
	reasons := make([]map[string]string, n)
	codes := make([]string, n)
	for i := range reasons {
		reasons[i], codes[i] = map[string]string{"Code": "None"}, "None"
	}
	reasons[n-1] = map[string]string{"Code": "TransactionConflict", "Message": "Transaction is ongoing for the item"}
	codes[n-1] = "TransactionConflict"
	b, _ := json.Marshal(map[string]any{
		"__type":              "com.amazonaws.dynamodb.v20120810#TransactionCanceledException",
		"message":             "Transaction cancelled, please refer cancellation reasons for specific reasons [" + strings.Join(codes, ", ") + "]",
		"CancellationReasons": reasons,
	})
	return b
}

func writeAWSError(w http.ResponseWriter, status int, queryError string, body []byte) {
	w.Header().Set("Content-Type", "application/x-amz-json-1.0")
	w.Header().Set("X-Amzn-Requestid", fmt.Sprintf("chaos-%d", time.Now().UnixNano()))
	if queryError != "" {
		w.Header().Set("X-Amzn-Query-Error", queryError)
	}
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

// reset closes the client's connection with a TCP RST, nothing answered.
func reset(w http.ResponseWriter) {
	hj, ok := w.(http.Hijacker)
	if !ok {
		panic(http.ErrAbortHandler)
	}
	conn, _, err := hj.Hijack()
	if err != nil {
		panic(http.ErrAbortHandler)
	}
	if tc, ok := conn.(*net.TCPConn); ok {
		_ = tc.SetLinger(0)
	}
	_ = conn.Close()
}
