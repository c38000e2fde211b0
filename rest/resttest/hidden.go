package resttest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
)

// hiddenDetails are the {"detail"} bodies upstream's hidden endpoints answer their refusals
// with: FastAPI's HTTPException with the status's own phrase.
var hiddenDetails = map[int]string{
	http.StatusBadRequest:   "Bad Request",
	http.StatusUnauthorized: "Unauthorized",
	http.StatusNotFound:     "Not Found",
}

// checkHidden judges the endpoints upstream serves but leaves out of its published
// document (include_in_schema=False): the Stripe webhook, which answers 202 with a null
// body once an event is taken, and its refusals as bare {"detail"} bodies. What every route
// may answer before its handler runs (a bearer token that is none, a body over the size
// limit, a rate limit) is judged as everywhere else. handled is false for every other path.
func checkHidden(req *http.Request, status int, body []byte) (handled bool, err error) {
	path := strings.TrimPrefix(req.URL.Path, "/api")
	if path != "/v1/integrations/stripe/webhook" {
		return false, nil
	}
	detail := hiddenDetails[status]
	switch {
	case status == http.StatusAccepted:
		if string(body) != "null" {
			return true, fmt.Errorf("an accepted event answered %s, want null", body)
		}
		return true, nil
	case detail == "":
		return true, checkUndocumented(status, body)
	}
	var m map[string]any
	if json.Unmarshal(body, &m) == nil && len(m) == 1 && m["detail"] == detail {
		return true, nil
	}
	if status == http.StatusUnauthorized && oneOf(body, oauth("invalid_token")) == nil {
		return true, nil // the bearer middleware's refusal of a token that is none
	}
	return true, fmt.Errorf("status %d with body %s, want {\"detail\": %q}", status, body, detail)
}
