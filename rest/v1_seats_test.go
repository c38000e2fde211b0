package rest_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
)

// seatBody is a CustomerSeat body.
type seatBody struct {
	ID                       uuid.UUID       `json:"id"`
	SubscriptionID           *uuid.UUID      `json:"subscription_id"`
	OrderID                  *uuid.UUID      `json:"order_id"`
	Status                   string          `json:"status"`
	CustomerID               *uuid.UUID      `json:"customer_id"`
	MemberID                 *uuid.UUID      `json:"member_id"`
	Member                   *memberBody     `json:"member"`
	Email                    *string         `json:"email"`
	CustomerEmail            *string         `json:"customer_email"`
	InvitationTokenExpiresAt *time.Time      `json:"invitation_token_expires_at"`
	ClaimedAt                *time.Time      `json:"claimed_at"`
	RevokedAt                *time.Time      `json:"revoked_at"`
	SeatMetadata             json.RawMessage `json:"seat_metadata"`
}

// seatWorld is a team that bought a seat-based subscription of three seats, with a billing
// manager and a plain member, and another organization's subscription.
type seatWorld struct {
	*memberWorld
	sub, foreignSub    uuid.UUID
	manager, plain     string // member sessions of the team
	customerSession    string // a session of another customer of the organization
	managerID, plainID uuid.UUID
}

func newSeatWorld(t *testing.T) *seatWorld {
	t.Helper()
	w := &seatWorld{memberWorld: newMemberWorld(t)}
	product := w.s.NewProduct(t, w.org.ID, "Team plan")
	w.sub = w.s.NewSubscription(t, w.org.ID, w.team, product.ID, ptr(3))
	w.foreignSub = w.s.NewSubscription(t, w.other.ID, w.s.NewCustomer(t, w.other.ID, "").ID,
		w.s.NewProduct(t, w.other.ID, "Theirs").ID, ptr(3))
	add := func(email, role string) (uuid.UUID, string) {
		m := w.member(t, call{method: http.MethodPost, target: "/v1/customers/" + w.team.String() + "/members",
			body: `{"email":"` + email + `","role":"` + role + `"}`}, 201)
		return m.ID, w.s.NewMemberSession(t, w.org.ID, w.team, m.ID)
	}
	w.managerID, w.manager = add("boss@team.example", "billing_manager")
	w.plainID, w.plain = add("dev@team.example", "member")
	w.customerSession = w.s.NewCustomerSession(t, w.org.ID, w.solo)
	return w
}

// seat sends a call that answers a CustomerSeat and decodes it.
func (w *seatWorld) seat(t *testing.T, c call, status int) seatBody {
	t.Helper()
	return answer[seatBody](t, w.memberWorld, c, status)
}

// claimLink matches the token of an invitation's claim link.
var claimLink = regexp.MustCompile(`/portal/claim\?token=([A-Za-z0-9_-]+)`)

// invitation is the token of the latest invitation mailed to an address.
func (w *seatWorld) invitation(t *testing.T, to string) string {
	t.Helper()
	var text string
	w.s.Get(t, &text, `SELECT args->>'text' FROM jobs WHERE kind = 'mail.send' AND args->>'to' = $1
		ORDER BY created_at DESC, id DESC LIMIT 1`, to)
	m := claimLink.FindStringSubmatch(text)
	if m == nil {
		t.Fatalf("no claim link in the mail to %s: %q", to, text)
	}
	return m[1]
}

func TestCustomerSeatsServeTheContract(t *testing.T) {
	t.Parallel()
	w := newSeatWorld(t)
	sub := `"subscription_id":"` + w.sub.String() + `"`
	var ada seatBody
	t.Run("a seat is assigned to a member made from the email, and the invitation mailed", func(t *testing.T) {
		ada = w.seat(t, call{method: http.MethodPost, target: "/v1/customer-seats", body: `{` + sub + `,"email":"ada@x.example","metadata":{"k":"v"}}`}, 200)
		if ada.Status != "pending" || *ada.CustomerID != w.team || ada.Member == nil || ada.Member.Email != "ada@x.example" ||
			ada.Member.CustomerID != w.team || *ada.Email != "ada@x.example" || ada.InvitationTokenExpiresAt == nil ||
			string(ada.SeatMetadata) != `{"k":"v"}` {
			t.Errorf("seat = %+v", ada)
		}
		var subject string
		w.s.Get(t, &subject, `SELECT args->>'subject' FROM jobs WHERE kind = 'mail.send' AND args->>'to' = 'ada@x.example'`)
		if subject != "You've been invited to access Team plan" {
			t.Errorf("subject = %q", subject)
		}
	})
	token := w.invitation(t, "ada@x.example")

	var bob seatBody
	t.Run("a seat is assigned to a member by its external id, made from the email and linked", func(t *testing.T) {
		bob = w.seat(t, call{method: http.MethodPost, target: "/v1/customer-seats",
			body: `{` + sub + `,"email":"bob@x.example","external_member_id":"u-bob","immediate_claim":true}`}, 200)
		if bob.Status != "claimed" || bob.ClaimedAt == nil || bob.InvitationTokenExpiresAt != nil || *bob.Member.ExternalID != "u-bob" {
			t.Errorf("seat = %+v", bob)
		}
	})

	for _, tc := range []struct {
		name string
		c    call
		want want
	}{
		{"neither a subscription nor an order is 422 at the body",
			call{method: http.MethodPost, target: "/v1/customer-seats", body: `{"email":"x@x.example"}`},
			validation(item{Type: "value_error", Loc: []any{"body"}, Msg: "Value error, Exactly one of subscription_id or order_id must be provided",
				Ctx: map[string]any{"error": map[string]any{}}})},
		{"no recipient is 422",
			call{method: http.MethodPost, target: "/v1/customer-seats", body: `{` + sub + `}`},
			validation(item{Type: "value_error", Loc: []any{"body"},
				Msg: "Value error, At least one of email, external_customer_id, customer_id, external_member_id, or member_id must be provided"})},
		{"a customer and a member together are 422",
			call{method: http.MethodPost, target: "/v1/customer-seats", body: `{` + sub + `,"customer_id":"` + w.solo.String() + `","member_id":"` + w.plainID.String() + `"}`},
			validation(item{Type: "value_error", Loc: []any{"body"}, Msg: "Value error, Cannot combine external_customer_id/customer_id with external_member_id/member_id"})},
		{"metadata of eleven keys is 422 on metadata",
			call{method: http.MethodPost, target: "/v1/customer-seats", body: `{` + sub + `,"email":"x@x.example","metadata":{` + manyKeys(11) + `}}`},
			validation(item{Type: "value_error", Loc: []any{"body", "metadata"}, Msg: "Value error, Metadata cannot have more than 10 keys"})},
		{"metadata over 1 KB is 422 on metadata",
			call{method: http.MethodPost, target: "/v1/customer-seats", body: `{` + sub + `,"email":"x@x.example","metadata":{"k":"` + strings.Repeat("é", 200) + `"}}`},
			validation(item{Type: "value_error", Loc: []any{"body", "metadata"}, Msg: "Value error, Metadata size cannot exceed 1KB"})},
		{"a member of another customer is not the buyer's",
			call{method: http.MethodPost, target: "/v1/customer-seats", body: `{` + sub + `,"member_id":"` + w.soloOwner.String() + `"}`},
			want{status: 404, error: "MemberNotFound", detail: "Member not found: " + w.soloOwner.String()}},
		{"an unknown external member id without an email is not found",
			call{method: http.MethodPost, target: "/v1/customer-seats", body: `{` + sub + `,"external_member_id":"nobody"}`},
			want{status: 404, error: "MemberNotFound", detail: "Member not found: nobody"}},
		{"an external member id with another email is a mismatch",
			call{method: http.MethodPost, target: "/v1/customer-seats", body: `{` + sub + `,"external_member_id":"u-bob","email":"eve@x.example"}`},
			want{status: 400, error: "MemberEmailMismatch"}},
		{"an unknown customer is an invalid request",
			call{method: http.MethodPost, target: "/v1/customer-seats", body: `{` + sub + `,"customer_id":"` + uuid.NewString() + `"}`},
			want{status: 400, error: "InvalidSeatAssignmentRequest", detail: "Customer not found for the provided customer_id or external_customer_id."}},
		{"an email holding a seat is refused",
			call{method: http.MethodPost, target: "/v1/customer-seats", body: `{` + sub + `,"email":"ADA@x.example"}`},
			want{status: 400, error: "SeatAlreadyAssigned", detail: "Seat already assigned to customer ada@x.example"}},
		{"another organization's subscription is not found",
			call{method: http.MethodPost, target: "/v1/customer-seats", body: `{"subscription_id":"` + w.foreignSub.String() + `","email":"x@x.example"}`},
			want{status: 404, error: "ResourceNotFound", detail: "Subscription not found"}},
		{"a list needs a purchase", call{target: "/v1/customer-seats"},
			want{status: 400, error: "BadRequest", detail: "Either subscription_id or order_id must be provided"}},
		{"an unknown invitation has no claim info", call{target: "/v1/customer-seats/claim/nope", token: "-"},
			want{status: 404, error: "ResourceNotFound", detail: "Invalid or expired invitation token"}},
		{"an unknown token claims nothing", call{method: http.MethodPost, target: "/v1/customer-seats/claim", body: `{"invitation_token":"nope"}`, token: "-"},
			want{status: 400, error: "InvalidInvitationToken", detail: "Invalid or expired invitation token"}},
		{"a claimed seat's invitation is not resent", call{method: http.MethodPost, target: "/v1/customer-seats/" + bob.ID.String() + "/resend"},
			want{status: 400, error: "SeatNotPending", detail: "Seat is not in pending status"}},
		{"another organization cannot revoke a seat", call{method: http.MethodDelete, target: "/v1/customer-seats/" + ada.ID.String(), token: w.other.Token},
			want{status: 404, error: "ResourceNotFound", detail: "Seat not found"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			switch tc.c.token {
			case "":
				tc.c.token = w.org.Token
			case "-":
				tc.c.token = ""
			}
			tc.want.check(t, w.s.do(t, tc.c))
		})
	}

	t.Run("the last seat goes to a customer's email, then none is left", func(t *testing.T) {
		s := w.seat(t, call{method: http.MethodPost, target: "/v1/customer-seats", body: `{` + sub + `,"external_customer_id":"solo-1"}`}, 200)
		if s.Member == nil || s.Member.CustomerID != w.team || s.Member.Role != "member" {
			t.Errorf("seat = %+v", s)
		}
		want{status: 400, error: "SeatNotAvailable", detail: "No available seats for " + w.sub.String()}.check(t,
			w.s.do(t, call{method: http.MethodPost, target: "/v1/customer-seats", body: `{` + sub + `,"email":"late@x.example"}`, token: w.org.Token}))
	})
	t.Run("the seats are listed with what is left", func(t *testing.T) {
		rec := w.s.do(t, call{target: "/v1/customer-seats?subscription_id=" + w.sub.String(), token: w.org.Token})
		want{status: 200, has: []string{`"available_seats":0`, `"total_seats":3`}}.check(t, rec)
	})
	t.Run("an invitation is resent with a new token, and the old one stops working", func(t *testing.T) {
		got := w.seat(t, call{method: http.MethodPost, target: "/v1/customer-seats/" + ada.ID.String() + "/resend"}, 200)
		fresh := w.invitation(t, "ada@x.example")
		if got.ID != ada.ID || got.Status != "pending" || fresh == token || !got.InvitationTokenExpiresAt.Equal(*ada.InvitationTokenExpiresAt) {
			t.Errorf("seat = %+v, token %q after %q", got, fresh, token)
		}
		want{status: 404}.check(t, w.s.do(t, call{target: "/v1/customer-seats/claim/" + token}))
		token = fresh
	})
	t.Run("an invitation tells what it offers without claiming it", func(t *testing.T) {
		rec := w.s.do(t, call{target: "/v1/customer-seats/claim/" + token})
		want{status: 200, has: []string{`"product_name":"Team plan"`, `"customer_email":"ada@x.example"`, `"can_claim":true`}}.check(t, rec)
	})
	t.Run("claiming needs no credential and opens a member session", func(t *testing.T) {
		rec := w.s.do(t, call{method: http.MethodPost, target: "/v1/customer-seats/claim", body: `{"invitation_token":"` + token + `"}`})
		want{status: 200}.check(t, rec)
		var out struct {
			Seat                 seatBody `json:"seat"`
			CustomerSessionToken string   `json:"customer_session_token"`
		}
		decodeJSON(t, rec.Body.Bytes(), &out)
		if out.Seat.Status != "claimed" || !strings.HasPrefix(out.CustomerSessionToken, "till_mst_") {
			t.Errorf("claim = %+v", out)
		}
		want{status: 400, error: "InvalidInvitationToken"}.check(t,
			w.s.do(t, call{method: http.MethodPost, target: "/v1/customer-seats/claim", body: `{"invitation_token":"` + token + `"}`}))
	})
	t.Run("revoking empties the seat", func(t *testing.T) {
		got := w.seat(t, call{method: http.MethodDelete, target: "/v1/customer-seats/" + ada.ID.String()}, 200)
		if got.Status != "revoked" || got.CustomerID != nil || got.MemberID != nil || got.Email != nil || got.Member != nil {
			t.Errorf("seat = %+v", got)
		}
	})
}

// manyKeys is n JSON object members.
func manyKeys(n int) string {
	keys := make([]string, n)
	for i := range keys {
		keys[i] = fmt.Sprintf(`"k%d":%d`, i, i)
	}
	return strings.Join(keys, ",")
}

func TestPortalSeatsServeTheContract(t *testing.T) {
	t.Parallel()
	w := newSeatWorld(t)
	sub := `"subscription_id":"` + w.sub.String() + `"`
	var eve seatBody
	t.Run("a billing manager assigns a seat of the team's subscription; the token is mailed only", func(t *testing.T) {
		rec := w.s.do(t, call{method: http.MethodPost, target: "/v1/customer-portal/seats", body: `{` + sub + `,"email":"eve@x.example"}`, token: w.manager})
		want{status: 200}.check(t, rec)
		decodeJSON(t, rec.Body.Bytes(), &eve)
		if eve.Status != "pending" || strings.Contains(rec.Body.String(), "token\":\"") {
			t.Errorf("seat = %s", rec.Body)
		}
		w.invitation(t, "eve@x.example")
	})
	for _, tc := range []struct {
		name string
		c    call
		want want
	}{
		{"a plain member cannot assign", call{method: http.MethodPost, target: "/v1/customer-portal/seats",
			body: `{` + sub + `,"email":"x@x.example"}`, token: w.plain},
			want{status: 403, error: "NotPermitted", detail: "Only owners and billing managers can access billing features."}},
		{"another customer's subscription is not found", call{method: http.MethodPost, target: "/v1/customer-portal/seats",
			body: `{` + sub + `,"email":"x@x.example"}`, token: w.customerSession},
			want{status: 404, error: "ResourceNotFound", detail: "Subscription not found"}},
		{"a checkout that produced nothing of the customer's is not found", call{method: http.MethodPost, target: "/v1/customer-portal/seats",
			body: `{"checkout_id":"` + uuid.NewString() + `","email":"x@x.example"}`, token: w.manager},
			want{status: 404, error: "ResourceNotFound", detail: "No subscription or order found for this checkout"}},
		{"a subscription and a checkout together are 422", call{method: http.MethodPost, target: "/v1/customer-portal/seats",
			body: `{` + sub + `,"checkout_id":"` + uuid.NewString() + `","email":"x@x.example"}`, token: w.manager},
			validation(item{Type: "value_error", Loc: []any{"body"}, Msg: "Value error, Exactly one of subscription_id, order_id, or checkout_id must be provided"})},
		{"another customer's seat cannot be revoked", call{method: http.MethodDelete, target: "/v1/customer-portal/seats/" + eve.ID.String(), token: w.customerSession},
			want{status: 404, error: "ResourceNotFound", detail: "Seat not found"}},
		{"a plain member cannot revoke", call{method: http.MethodDelete, target: "/v1/customer-portal/seats/" + eve.ID.String(), token: w.plain},
			want{status: 403, error: "NotPermitted"}},
	} {
		t.Run(tc.name, func(t *testing.T) { tc.want.check(t, w.s.do(t, tc.c)) })
	}
	t.Run("every member of the team lists the subscription's seats", func(t *testing.T) {
		for _, token := range []string{w.plain, w.manager} {
			want{status: 200, has: []string{`"total_seats":3`, `"available_seats":2`, eve.ID.String()}}.check(t,
				w.s.do(t, call{target: "/v1/customer-portal/seats?subscription_id=" + w.sub.String(), token: token}))
		}
	})
	t.Run("a billing manager resends and revokes", func(t *testing.T) {
		got := w.seat(t, call{method: http.MethodPost, target: "/v1/customer-portal/seats/" + eve.ID.String() + "/resend", token: w.manager}, 200)
		if got.Status != "pending" {
			t.Errorf("seat = %+v", got)
		}
		got = w.seat(t, call{method: http.MethodDelete, target: "/v1/customer-portal/seats/" + eve.ID.String(), token: w.manager}, 200)
		if got.Status != "revoked" {
			t.Errorf("seat = %+v", got)
		}
	})
}
