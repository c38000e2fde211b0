package stripemock

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// Request is one request a client sent through a Proxy.
type Request struct {
	Method, Path string
	// Form is the form body of a POST, or the query of a GET.
	Form           url.Values
	IdempotencyKey string
}

// Route is the request's method and path, as "POST /v1/customers".
func (r Request) Route() string { return r.Method + " " + r.Path }

// Reply is an answer a Proxy gives in stripe-mock's stead.
type Reply struct {
	Status int
	Body   any // encoded as JSON
}

// CardDeclined is Stripe's answer to a charge the card's issuer refused: HTTP 402 with a
// card_error carrying the decline code, which stripe-mock never gives.
func CardDeclined(declineCode, message string) Reply {
	return Reply{Status: http.StatusPaymentRequired, Body: map[string]any{"error": map[string]any{
		"type": "card_error", "code": "card_declined", "decline_code": declineCode, "message": message}}}
}

// Proxy stands between a client of the Stripe API and stripe-mock. It records every request,
// so a test can check what was sent; it answers a POST whose idempotency key it has seen
// with the first answer, as Stripe does (stripe-mock answers each request anew); it answers
// the requests a test chose with the test's Reply; and it sets in stripe-mock's answers what
// the fixtures leave as a new object has it to what a real account answers a confirmed
// request with (see answerPatches). Everything else is stripe-mock's.
type Proxy struct {
	// URL is the proxy's base URL, to be given to the processor as its API URL.
	URL string

	target  string
	mu      sync.Mutex
	sent    []Request
	replies []chosenReply
	// answered keeps each idempotency key's answer; keys locks each key while it is first
	// answered, so concurrent requests with one key get one answer.
	answered map[string]answer
	keys     map[string]*sync.Mutex
}

type chosenReply struct {
	match func(Request) bool
	reply Reply
}

type answer struct {
	status int
	body   []byte
}

// FixtureCustomer is the customer a payment method read back through a Proxy is saved to.
const FixtureCustomer = "cus_fixture"

// answerPatches set in stripe-mock's answers, by route prefix, what a real account answers:
// confirmed intents succeed and a payment intent has a charge of its own (stripe-mock
// names none, and Till keeps charges apart by id); a payment method read back is saved to
// a customer.
var answerPatches = map[string]func(object map[string]any){
	"POST /v1/setup_intents": func(o map[string]any) { o["status"] = "succeeded" },
	"POST /v1/payment_intents": func(o map[string]any) {
		o["status"] = "succeeded"
		if id, ok := o["id"].(string); ok {
			o["latest_charge"] = "ch_" + strings.TrimPrefix(id, "pi_")
		}
	},
	"GET /v1/payment_methods/": func(o map[string]any) { o["customer"] = FixtureCustomer },
}

// StartProxy starts stripe-mock (see Start) and a Proxy in front of it, both until tb ends.
func StartProxy(tb testing.TB) *Proxy {
	tb.Helper()
	p := &Proxy{target: Start(tb), answered: map[string]answer{}, keys: map[string]*sync.Mutex{}}
	srv := httptest.NewServer(http.HandlerFunc(p.serve))
	tb.Cleanup(srv.Close)
	p.URL = srv.URL
	return p
}

// Requests returns the requests sent so far, oldest first.
func (p *Proxy) Requests() []Request {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]Request(nil), p.sent...)
}

// RequestsTo returns the requests sent on one route ("POST /v1/customers"), oldest first.
func (p *Proxy) RequestsTo(route string) []Request {
	var out []Request
	for _, r := range p.Requests() {
		if r.Route() == route {
			out = append(out, r)
		}
	}
	return out
}

// Answer makes the proxy answer every later request that match accepts with reply rather
// than stripe-mock's answer; of several Answers that accept a request, the first wins.
func (p *Proxy) Answer(match func(Request) bool, reply Reply) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.replies = append(p.replies, chosenReply{match: match, reply: reply})
}

// serve records a request and answers it.
func (p *Proxy) serve(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	req := Request{Method: r.Method, Path: r.URL.Path, Form: r.URL.Query(), IdempotencyKey: r.Header.Get("Idempotency-Key")}
	if r.Method != http.MethodGet {
		req.Form, err = url.ParseQuery(string(body))
	}
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	p.mu.Lock()
	p.sent = append(p.sent, req)
	p.mu.Unlock()
	a, err := p.answer(req, r, body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(a.body)))
	w.WriteHeader(a.status)
	_, _ = w.Write(a.body)
}

// answer is the answer to req: the first answer to its idempotency key, else the test's
// Reply, else stripe-mock's, patched.
func (p *Proxy) answer(req Request, r *http.Request, body []byte) (answer, error) {
	if req.Method != http.MethodPost || req.IdempotencyKey == "" {
		return p.fresh(req, r, body)
	}
	p.mu.Lock()
	lock, ok := p.keys[req.IdempotencyKey]
	if !ok {
		lock = &sync.Mutex{}
		p.keys[req.IdempotencyKey] = lock
	}
	p.mu.Unlock()
	lock.Lock()
	defer lock.Unlock()
	p.mu.Lock()
	a, seen := p.answered[req.IdempotencyKey]
	p.mu.Unlock()
	if seen {
		return a, nil
	}
	a, err := p.fresh(req, r, body)
	if err == nil {
		p.mu.Lock()
		p.answered[req.IdempotencyKey] = a
		p.mu.Unlock()
	}
	return a, err
}

// fresh answers req without looking at its idempotency key.
func (p *Proxy) fresh(req Request, r *http.Request, body []byte) (answer, error) {
	p.mu.Lock()
	for _, c := range p.replies {
		if c.match(req) {
			p.mu.Unlock()
			b, err := json.Marshal(c.reply.Body)
			return answer{status: c.reply.Status, body: b}, err
		}
	}
	p.mu.Unlock()
	out, err := http.NewRequestWithContext(r.Context(), r.Method, p.target+r.URL.RequestURI(), bytes.NewReader(body))
	if err != nil {
		return answer{}, err
	}
	out.Header = r.Header.Clone()
	resp, err := http.DefaultClient.Do(out)
	if err != nil {
		return answer{}, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return answer{}, err
	}
	if resp.StatusCode == http.StatusOK {
		b, err = patch(req.Route(), b)
	}
	return answer{status: resp.StatusCode, body: b}, err
}

// patch applies the answerPatches of route to a JSON object.
func patch(route string, body []byte) ([]byte, error) {
	for prefix, set := range answerPatches {
		if !strings.HasPrefix(route, prefix) {
			continue
		}
		var object map[string]any
		if err := json.Unmarshal(body, &object); err != nil {
			return nil, err
		}
		set(object)
		return json.Marshal(object)
	}
	return body, nil
}
