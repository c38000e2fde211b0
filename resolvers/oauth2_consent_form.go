package resolvers

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"time"

	"github.com/google/uuid"

	"till/internal/auth"
)

// ConsentTokenField is the consent form's field holding its anti-forgery token.
const ConsentTokenField = "csrf_token"

// consentFormTTL is how long a consent page may stay open before its answer is refused.
const consentFormTTL = time.Hour

// ConsentField is one hidden field of the consent form.
type ConsentField struct{ Name, Value string }

// ConsentForm is what the consent page needs besides the consent data to post the user's
// answer to POST /v1/oauth2/consent.
type ConsentForm struct {
	// Fields are the authorization request's parameters, posted back with the answer, so the
	// consent is validated again as a whole.
	Fields []ConsentField
	// Token is the form's anti-forgery token (ConsentTokenField). It binds the answer to the
	// session that saw the page and to this very request, so a page of another site cannot
	// post a consent, nor can a token shown for one application consent to another.
	Token string
	// Email is the signed-in user's, shown on the page.
	Email string
	// RedirectOrigin is the origin of the redirect URI the answer goes to: the page's
	// Content-Security-Policy must let the form's redirect reach it.
	RedirectOrigin string
	// LogoURI is the client's logo when Till's own origin serves it, the only images the page
	// loads; empty otherwise.
	LogoURI string
}

// safeOrigin is what RedirectOrigin may hold: an origin that cannot break out of a
// Content-Security-Policy source expression.
var safeOrigin = regexp.MustCompile(`^https?://[A-Za-z0-9.\-]+(:[0-9]{1,5})?$|^https?://\[[0-9A-Fa-f:.]+\](:[0-9]{1,5})?$`)

// consentForm builds the form of a signed-in user's consent page.
func (r *Resolver) consentForm(p auth.Principal, v *ValidAuthorization) *ConsentForm {
	f := &ConsentForm{Token: r.consentToken(p, v.Request, r.Now().Add(consentFormTTL))}
	for _, field := range consentFields(v.Request) {
		if field.Value != "" {
			f.Fields = append(f.Fields, field)
		}
	}
	if u, err := url.Parse(v.RedirectURI); err == nil && safeOrigin.MatchString(u.Scheme+"://"+u.Host) {
		f.RedirectOrigin = u.Scheme + "://" + u.Host
	}
	if logo := v.Client.LogoURI; logo != nil && sameOrigin(*logo, r.Issuer()) {
		f.LogoURI = *logo
	}
	return f
}

// consentFields are the parameters of an authorization request the consent form posts back,
// in a fixed order, which is also the order the token signs them in.
func consentFields(req AuthorizeRequest) []ConsentField {
	return []ConsentField{{"response_type", req.ResponseType}, {"client_id", req.ClientID},
		{"redirect_uri", req.RedirectURI}, {"scope", req.Scope}, {"state", req.State}, {"nonce", req.Nonce},
		{"code_challenge", req.CodeChallenge}, {"code_challenge_method", req.CodeChallengeMethod},
		{"sub_type", req.SubType}}
}

// consentToken signs the session, the user, the expiry and the request's parameters with a
// key derived from the server secret for this use alone.
func (r *Resolver) consentToken(p auth.Principal, req AuthorizeRequest, expires time.Time) string {
	key := hmac.New(sha256.New, r.secret)
	key.Write([]byte("till oauth2 consent form"))
	mac := hmac.New(sha256.New, key.Sum(nil))
	exp := binary.BigEndian.AppendUint64(nil, uint64(expires.Unix()))
	mac.Write(exp)
	for _, s := range append([]string{p.TokenID.String(), p.UserID.String()}, fieldValues(req)...) {
		mac.Write([]byte(strconv.Itoa(len(s)) + ":" + s))
	}
	return base64.RawURLEncoding.EncodeToString(mac.Sum(exp))
}

func fieldValues(req AuthorizeRequest) []string {
	var out []string
	for _, f := range consentFields(req) {
		out = append(out, f.Value)
	}
	return out
}

// validConsentToken reports whether token is one consentToken made for this session and
// request and has not expired.
func (r *Resolver) validConsentToken(p auth.Principal, req AuthorizeRequest, token string) bool {
	raw, err := base64.RawURLEncoding.DecodeString(token)
	if err != nil || len(raw) != 8+sha256.Size {
		return false
	}
	expires := time.Unix(int64(binary.BigEndian.Uint64(raw[:8])), 0)
	if !r.Now().Before(expires) {
		return false
	}
	return hmac.Equal([]byte(r.consentToken(p, req, expires)), []byte(token))
}

// ConsentSubmission is the consent form as posted: the authorization request, the user's
// answer, the organization chosen and the form's token.
type ConsentSubmission struct {
	Request AuthorizeRequest
	// Action is allow or deny.
	Action string
	// Organizations are the organizations chosen (upstream's repeated organizations field):
	// at most one, the subject of an organization token or the down-scope of a user token.
	Organizations []string
	Token         string
	// Malformed says the form could not be read or holds text PostgreSQL cannot store.
	Malformed bool
	// CrossSite says the browser named a page of a site Till does not trust as the form's
	// sender (auth.Browser.TrustedOrigin): the sign-in's origin check, on top of the token.
	CrossSite bool
}

// ConsentOutcome is the answer to a consent form. Exactly one field is set.
type ConsentOutcome struct {
	// Redirect sends the browser back to the client, with a code or with access_denied.
	Redirect string
	// OAuth2Error is shown to the user: the request named no valid client or redirect URI,
	// could not be read, or met a server fault.
	OAuth2Error *OAuth2Error
	// Error refuses the caller or the answer: no browser session, a forged or expired form,
	// an organization the user may not choose.
	Error *Error
}

// SubmitOAuth2Consent answers POST /v1/oauth2/consent, upstream's consent endpoint, for a
// signed-in browser user: deny sends access_denied to the client, allow grants the consent
// through the same grantConsent as the authorizeOAuth2 mutation. Refused callers and forged
// forms are turned away before anything is read from the database.
func (r *Resolver) SubmitOAuth2Consent(ctx context.Context, s ConsentSubmission) ConsentOutcome {
	p := auth.FromContext(ctx)
	switch {
	case p.Anonymous():
		return ConsentOutcome{Error: Unauthorized()}
	case !browserUser(p):
		return ConsentOutcome{Error: NotPermitted("")}
	case s.Malformed:
		return ConsentOutcome{OAuth2Error: malformedOAuth2Request()}
	case s.CrossSite || !r.validConsentToken(p, s.Request, s.Token):
		return ConsentOutcome{Error: &Error{Code: CodeCSRF,
			Detail: "This consent form has expired or was not issued to you here; open the application's link again."}}
	case s.Action != "allow" && s.Action != "deny":
		return ConsentOutcome{Error: Invalid("literal_error", "Input should be 'allow' or 'deny'", s.Action, "body", "action")}
	}
	v, redirect, shown := r.validateForBrowser(ctx, "consent", s.Request)
	switch {
	case redirect != "":
		return ConsentOutcome{Redirect: redirect}
	case shown != nil:
		return ConsentOutcome{OAuth2Error: shown}
	case s.Action == "deny":
		return ConsentOutcome{Redirect: r.deniedRedirect(v)}
	}
	var err error
	if v.Request.OrganizationID, err = chosenOrganization(s.Organizations); err == nil {
		var issued *IssuedConsent
		if issued, err = r.grantConsent(ctx, v); err == nil {
			return ConsentOutcome{Redirect: issued.Redirect}
		}
	}
	var refused *Error
	if errors.As(err, &refused) {
		return ConsentOutcome{Error: inConsentForm(refused)}
	}
	return ConsentOutcome{OAuth2Error: r.oauth2Failure(ctx, "consent", ClientCredentials{}, err)}
}

// inConsentForm is a copy of a consent refusal whose field errors name the form's field,
// organizations, where grantConsent names the mutation's organizationId.
func inConsentForm(e *Error) *Error {
	out := *e
	out.Errors = slices.Clone(e.Errors)
	for i, fe := range out.Errors {
		if slices.Equal(fe.Loc, []any{"input", "organizationId"}) {
			out.Errors[i].Loc = []any{"body", "organizations"}
		}
	}
	return &out
}

// chosenOrganization reads the organizations field: none, or one organization id, repeated
// or not.
func chosenOrganization(values []string) (*uuid.UUID, error) {
	var chosen *uuid.UUID
	for _, s := range values {
		if s == "" {
			continue
		}
		id, err := uuid.Parse(s)
		if err != nil {
			return nil, Invalid("uuid_parsing", "Input should be a valid UUID", s, "body", "organizations")
		}
		if chosen != nil && *chosen != id {
			return nil, Invalid("value_error", "Choose at most one organization.", values, "body", "organizations")
		}
		chosen = &id
	}
	return chosen, nil
}
