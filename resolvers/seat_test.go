package resolvers_test

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"

	"till/resolvers"
	"till/resolvers/resolverstest"
)

const seatFields = `id subscriptionId orderId status customerId memberId member { id email role } email customerEmail
	invitationTokenExpiresAt claimedAt revokedAt seatMetadata`

type seat struct {
	ID             uuid.UUID  `json:"id"`
	SubscriptionID *uuid.UUID `json:"subscriptionId"`
	OrderID        *uuid.UUID `json:"orderId"`
	Status         string     `json:"status"`
	CustomerID     *uuid.UUID `json:"customerId"`
	MemberID       *uuid.UUID `json:"memberId"`
	Member         *struct {
		ID    uuid.UUID `json:"id"`
		Email string    `json:"email"`
		Role  string    `json:"role"`
	} `json:"member"`
	Email                    *string        `json:"email"`
	CustomerEmail            *string        `json:"customerEmail"`
	InvitationTokenExpiresAt *string        `json:"invitationTokenExpiresAt"`
	ClaimedAt                *string        `json:"claimedAt"`
	RevokedAt                *string        `json:"revokedAt"`
	SeatMetadata             map[string]any `json:"seatMetadata"`
}

const (
	assignSeat = `mutation($in: CustomerSeatAssignInput!) { assignSeat(input: $in) { invitationToken seat { ` + seatFields + ` } } }`
	claimSeat  = `mutation($t: String!) { claimSeat(input: {invitationToken: $t}) { customerSessionToken seat { ` + seatFields + ` } } }`
	revokeSeat = `mutation($id: UUID!) { revokeSeat(input: {id: $id}) { ` + seatFields + ` } }`
)

// assign assigns a seat and returns it with its claim token.
func (w *grantWorld) assign(tb testing.TB, in vars) (seat, string) {
	tb.Helper()
	var out struct {
		AssignSeat struct {
			InvitationToken string
			Seat            seat
		}
	}
	w.s.Query(tb, w.org.Token, assignSeat, vars{"in": in}, &out)
	return out.AssignSeat.Seat, out.AssignSeat.InvitationToken
}

// claim claims a seat with no credential but its token, and returns it with the member session.
func (w *grantWorld) claim(tb testing.TB, token string) (seat, string) {
	tb.Helper()
	var out struct {
		ClaimSeat struct {
			CustomerSessionToken string
			Seat                 seat
		}
	}
	w.s.Query(tb, "", claimSeat, vars{"t": token}, &out)
	return out.ClaimSeat.Seat, out.ClaimSeat.CustomerSessionToken
}

// portal reads the portal lists of a session.
func portal(tb testing.TB, s *resolverstest.Server, token string) (grants []grant, keys []licenseKey, seats []seat) {
	tb.Helper()
	var out struct {
		Me struct {
			BenefitGrants struct{ Items []grant }
			LicenseKeys   struct{ Items []licenseKey }
			Seats         struct{ Items []seat }
		}
	}
	s.Query(tb, token, `{ me { benefitGrants(limit: 100) { items { `+grantFields+` } }
		licenseKeys(limit: 100) { items { `+licenseKeyFields+` } } seats(limit: 100) { items { `+seatFields+` } } } }`, nil, &out)
	return out.Me.BenefitGrants.Items, out.Me.LicenseKeys.Items, out.Me.Seats.Items
}

func TestSeats(t *testing.T) {
	t.Parallel()
	w := newGrantWorld(t)
	lk := w.licenseBenefit(t, vars{"prefix": "team"})
	p := w.s.NewProduct(t, w.org.ID, "Team plan", lk.ID)
	buyer := w.s.NewCustomer(t, w.org.ID, "")
	subID := w.s.NewSubscription(t, w.org.ID, buyer.ID, p.ID, ptr(2))
	subScope := resolvers.GrantScope{CustomerID: buyer.ID, ProductID: p.ID, SubscriptionID: &subID}
	seatEvents := func(tb testing.TB) []int {
		e := w.events(tb)
		return []int{e["customer_seat.assigned"], e["customer_seat.claimed"], e["customer_seat.revoked"]}
	}

	t.Run("a seat-based purchase grants nothing to its buyer", func(t *testing.T) {
		w.grant(t, subScope)
		if gs := w.grants(t, lk.ID, nil); len(gs) != 0 {
			t.Fatalf("grants = %+v, want none before a seat is claimed", gs)
		}
	})

	ada, adaToken := w.assign(t, vars{"subscriptionId": subID, "email": "ada@example.com", "metadata": vars{"team": "core"}})
	t.Run("assigning a seat leaves it pending with a day to claim it, for a member of the buyer", func(t *testing.T) {
		if ada.Status != "pending" || ada.CustomerID == nil || *ada.CustomerID != buyer.ID || ada.MemberID == nil ||
			ada.Member == nil || ada.Member.Email != "ada@example.com" || ada.Member.Role != "member" ||
			*ada.Email != "ada@example.com" || *ada.CustomerEmail != *buyer.Email || ada.InvitationTokenExpiresAt == nil ||
			ada.SeatMetadata["team"] != "core" || len(adaToken) != 43 {
			t.Errorf("seat = %+v, token %q", ada, adaToken)
		}
		var stored int
		w.s.Get(t, &stored, `SELECT count(*) FROM customer_seats WHERE invitation_token = $1`, adaToken)
		if stored != 0 {
			t.Error("the claim token is stored in clear")
		}
	})

	t.Run("an email already holding a seat of the purchase is refused", func(t *testing.T) {
		e := w.s.QueryError(t, w.org.Token, assignSeat, vars{"in": vars{"subscriptionId": subID, "email": "ADA@example.com"}})
		wantError(t, e, "CONFLICT", "SeatAlreadyAssigned")
	})

	_, bobToken := w.assign(t, vars{"subscriptionId": subID, "email": "bob@example.com"})
	t.Run("assigning more seats than bought is refused and stores nothing", func(t *testing.T) {
		e := w.s.QueryError(t, w.org.Token, assignSeat, vars{"in": vars{"subscriptionId": subID, "email": "cy@example.com"}})
		wantError(t, e, "CONFLICT", "SeatNotAvailable")
		if e.Message != "No available seats for "+subID.String() {
			t.Errorf("message = %q", e.Message)
		}
		var n int
		w.s.Get(t, &n, `SELECT count(*) FROM customer_seats WHERE subscription_id = $1`, subID)
		if n != 2 {
			t.Errorf("seats stored = %d, want 2", n)
		}
	})

	var adaSession string
	t.Run("claiming makes the email a member and grants it the benefits", func(t *testing.T) {
		var claimed seat
		claimed, adaSession = w.claim(t, adaToken)
		if claimed.Status != "claimed" || claimed.ClaimedAt == nil || claimed.Member == nil ||
			claimed.Member.Email != "ada@example.com" || claimed.Member.Role != "member" || !strings.HasPrefix(adaSession, "till_mst_") {
			t.Fatalf("claimed = %+v, session %q", claimed, adaSession)
		}
		gs := w.grants(t, lk.ID, nil)
		if len(gs) != 1 || gs[0].MemberID == nil || *gs[0].MemberID != claimed.Member.ID || gs[0].CustomerID != buyer.ID ||
			gs[0].Member.Email != "ada@example.com" || !gs[0].IsGranted {
			t.Fatalf("grants = %+v, want one for ada's member", gs)
		}
		keys := w.licenseKeys(t, lk.ID)
		if len(keys) != 1 || keys[0].MemberID == nil || *keys[0].MemberID != claimed.Member.ID || !strings.HasPrefix(keys[0].Key, "TEAM-") {
			t.Errorf("keys = %+v, want one held by ada's member", keys)
		}
	})

	t.Run("a token claims once", func(t *testing.T) {
		e := w.s.QueryError(t, "", claimSeat, vars{"t": adaToken})
		wantError(t, e, "BAD_USER_INPUT", "InvalidInvitationToken")
	})

	t.Run("an unknown or expired token is refused alike and changes nothing", func(t *testing.T) {
		wantError(t, w.s.QueryError(t, "", claimSeat, vars{"t": "nope"}), "BAD_USER_INPUT", "InvalidInvitationToken")
		w.s.Exec(t, `UPDATE customer_seats SET invitation_token_expires_at = now() - interval '1 second' WHERE email = 'bob@example.com'`)
		wantError(t, w.s.QueryError(t, "", claimSeat, vars{"t": bobToken}), "BAD_USER_INPUT", "InvalidInvitationToken")
		var status string
		w.s.Get(t, &status, `SELECT status FROM customer_seats WHERE email = 'bob@example.com'`)
		if status != "pending" {
			t.Errorf("bob's seat = %s, want still pending", status)
		}
	})

	t.Run("a member session sees its own grants, keys and seat only", func(t *testing.T) {
		gs, keys, seats := portal(t, w.s, adaSession)
		if len(gs) != 1 || len(keys) != 1 || len(seats) != 1 || seats[0].ID != ada.ID {
			t.Errorf("member portal: %d grants, %d keys, %d seats; want 1, 1 and ada's seat", len(gs), len(keys), len(seats))
		}
	})

	t.Run("the buyer's customer session sees every grant, key and seat of its purchases", func(t *testing.T) {
		gs, keys, seats := portal(t, w.s, w.s.NewCustomerSession(t, w.org.ID, buyer.ID))
		if len(gs) != 1 || len(keys) != 1 || len(seats) != 2 {
			t.Errorf("customer portal: %d grants, %d keys, %d seats; want 1, 1 and 2", len(gs), len(keys), len(seats))
		}
	})

	t.Run("granting the subscription again re-grants claimed seats only", func(t *testing.T) {
		w.revoke(t, subScope)
		if g := w.grants(t, lk.ID, nil); len(g) != 1 || !g[0].IsRevoked {
			t.Fatalf("grants = %+v, want ada's revoked with the subscription", g)
		}
		w.grant(t, subScope)
		if g := w.grants(t, lk.ID, nil); len(g) != 1 || !g[0].IsGranted {
			t.Fatalf("grants = %+v, want ada's granted again", g)
		}
	})

	t.Run("revoking a claimed seat revokes its holder's grants and key", func(t *testing.T) {
		var out struct{ RevokeSeat seat }
		w.s.Query(t, w.org.Token, revokeSeat, vars{"id": ada.ID}, &out)
		if out.RevokeSeat.Status != "revoked" || out.RevokeSeat.RevokedAt == nil {
			t.Errorf("seat = %+v, want revoked", out.RevokeSeat)
		}
		if s := out.RevokeSeat; s.CustomerID != nil || s.MemberID != nil || s.Member != nil || s.Email != nil || s.CustomerEmail != nil {
			t.Errorf("seat = %+v, want it emptied of its customer, member and email", s)
		}
		if g := w.grants(t, lk.ID, nil); len(g) != 1 || !g[0].IsRevoked {
			t.Errorf("grants = %+v, want ada's revoked", g)
		}
		if k := w.licenseKeys(t, lk.ID); k[0].Status != "revoked" {
			t.Errorf("key = %s, want revoked", k[0].Status)
		}
	})

	t.Run("revoking a revoked seat changes nothing and emits nothing", func(t *testing.T) {
		before := seatEvents(t)
		var out struct{ RevokeSeat seat }
		w.s.Query(t, w.org.Token, revokeSeat, vars{"id": ada.ID}, &out)
		if diff := cmp.Diff(before, seatEvents(t)); diff != "" {
			t.Errorf("seat events (-before +after):\n%s", diff)
		}
	})

	t.Run("a revoked seat frees its place for the next assignment", func(t *testing.T) {
		cy, _ := w.assign(t, vars{"subscriptionId": subID, "email": "cy@example.com"})
		if cy.ID != ada.ID || cy.Status != "pending" || cy.Member == nil || cy.Member.Email != "cy@example.com" ||
			*cy.Email != "cy@example.com" || cy.RevokedAt != nil {
			t.Errorf("seat = %+v, want ada's revoked seat reused for cy", cy)
		}
		var out struct {
			Seats struct {
				Seats          []seat
				AvailableSeats int
				TotalSeats     int
			}
		}
		w.s.Query(t, w.org.Token, `query($s: UUID) { seats(subscriptionId: $s) { seats { `+seatFields+` } availableSeats totalSeats } }`,
			vars{"s": subID}, &out)
		if len(out.Seats.Seats) != 2 || out.Seats.AvailableSeats != 0 || out.Seats.TotalSeats != 2 {
			t.Errorf("seats = %+v", out.Seats)
		}
	})

	t.Run("every seat change is an event", func(t *testing.T) {
		if diff := cmp.Diff([]int{3, 1, 1}, seatEvents(t)); diff != "" {
			t.Errorf("assigned, claimed, revoked events (-want +got):\n%s", diff)
		}
	})
}

func TestSeatRules(t *testing.T) {
	t.Parallel()
	w := newGrantWorld(t)
	p := w.s.NewProduct(t, w.org.ID, "Team plan")
	c := w.s.NewCustomer(t, w.org.ID, "")
	seatBased := w.s.NewSubscription(t, w.org.ID, c.ID, p.ID, ptr(3))
	plain := w.s.NewSubscription(t, w.org.ID, c.ID, p.ID, nil)
	unpaid := w.s.NewPaidOrder(t, w.org.ID, c.ID, p.ID, ptr(3))
	w.s.Exec(t, `UPDATE orders SET status = 'pending' WHERE id = $1`, unpaid)
	canceled := w.s.NewSubscription(t, w.org.ID, c.ID, p.ID, ptr(3))
	w.s.Exec(t, `UPDATE subscriptions SET status = 'canceled' WHERE id = $1`, canceled)
	other := w.s.NewOrg(t, resolverstest.AllScopes)
	foreign := w.s.NewCustomer(t, other.ID, "")
	foreignSub := w.s.NewSubscription(t, other.ID, foreign.ID, w.s.NewProduct(t, other.ID, "Theirs").ID, ptr(3))
	paid := w.s.NewPaidOrder(t, w.org.ID, c.ID, p.ID, ptr(1))

	for _, tc := range []struct {
		name   string
		token  string
		in     vars
		code   string
		reason string
		field  *fieldErr
	}{
		{name: "neither a subscription nor an order is bad input", in: vars{"email": "a@example.com"},
			code: "BAD_USER_INPUT", reason: "PolarRequestValidationError",
			field: &fieldErr{Type: "value_error", Loc: []any{"input", "subscriptionId"}, Msg: "Exactly one of subscriptionId and orderId is required."}},
		{name: "both a subscription and an order is bad input", in: vars{"email": "a@example.com", "subscriptionId": seatBased, "orderId": paid},
			code: "BAD_USER_INPUT", reason: "PolarRequestValidationError",
			field: &fieldErr{Type: "value_error", Loc: []any{"input", "subscriptionId"}, Msg: "Exactly one of subscriptionId and orderId is required."}},
		{name: "a malformed email is bad input", in: vars{"email": "not-an-email", "subscriptionId": seatBased},
			code: "BAD_USER_INPUT", reason: "PolarRequestValidationError",
			field: &fieldErr{Type: "value_error", Loc: []any{"input", "email"}, Msg: "value is not a valid email address: The email address is not valid.", Input: "not-an-email"}},
		{name: "a subscription without seats has none to give", in: vars{"email": "a@example.com", "subscriptionId": plain},
			code: "CONFLICT", reason: "SeatNotAvailable"},
		{name: "an unpaid order gives no seats", in: vars{"email": "a@example.com", "orderId": unpaid},
			code: "CONFLICT", reason: "SeatNotAvailable"},
		{name: "a canceled subscription gives no seats", in: vars{"email": "a@example.com", "subscriptionId": canceled},
			code: "CONFLICT", reason: "SeatNotAvailable"},
		{name: "another organization's subscription is not found", in: vars{"email": "a@example.com", "subscriptionId": foreignSub},
			code: "NOT_FOUND", reason: "ResourceNotFound"},
		{name: "an unknown order is not found", in: vars{"email": "a@example.com", "orderId": uuid.New()},
			code: "NOT_FOUND", reason: "ResourceNotFound"},
		{name: "a token without customer_seats:write is forbidden", token: w.s.NewToken(t, w.org.ID, "customer_seats:read"),
			in: vars{"email": "a@example.com", "subscriptionId": seatBased}, code: "FORBIDDEN", reason: "insufficient_scope"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			token := tc.token
			if token == "" {
				token = w.org.Token
			}
			e := w.s.QueryError(t, token, assignSeat, vars{"in": tc.in})
			if tc.field != nil {
				wantError(t, e, tc.code, tc.reason, *tc.field)
			} else if e.Extensions.Code != tc.code || e.Extensions.Reason != tc.reason {
				t.Errorf("error = %s (%s) %q, want %s (%s)", e.Extensions.Code, e.Extensions.Reason, e.Message, tc.code, tc.reason)
			}
		})
	}

	t.Run("a paid order's seat is assigned and claimed like a subscription's", func(t *testing.T) {
		s, token := w.assign(t, vars{"orderId": paid, "email": "o@example.com"})
		claimed, _ := w.claim(t, token)
		if s.OrderID == nil || *s.OrderID != paid || claimed.Status != "claimed" {
			t.Errorf("assigned %+v, claimed %+v", s, claimed)
		}
	})

	t.Run("other organizations can neither read nor revoke a seat", func(t *testing.T) {
		s, _ := w.assign(t, vars{"subscriptionId": seatBased, "email": "t@example.com"})
		wantError(t, w.s.QueryError(t, other.Token, revokeSeat, vars{"id": s.ID}), "NOT_FOUND", "ResourceNotFound")
		wantError(t, w.s.QueryError(t, other.Token, `query($id: UUID!) { seat(id: $id) { id } }`, vars{"id": s.ID}), "NOT_FOUND", "ResourceNotFound")
		wantError(t, w.s.QueryError(t, other.Token, `query($s: UUID) { seats(subscriptionId: $s) { totalSeats } }`,
			vars{"s": seatBased}), "NOT_FOUND", "ResourceNotFound")
	})

	t.Run("a claim of a seat whose subscription ended is refused", func(t *testing.T) {
		_, token := w.assign(t, vars{"subscriptionId": seatBased, "email": "late@example.com"})
		w.s.Exec(t, `UPDATE subscriptions SET status = 'canceled', ended_at = $2 WHERE id = $1`, seatBased, time.Now())
		wantError(t, w.s.QueryError(t, "", claimSeat, vars{"t": token}), "BAD_USER_INPUT", "InvalidInvitationToken")
	})
}

// TestSeatsEndWithTheirSubscription: revoking a seat-based subscription revokes its seats
// (pending and claimed) with their events, and their holders' grants.
func TestSeatsEndWithTheirSubscription(t *testing.T) {
	t.Parallel()
	w := newGrantWorld(t)
	lk := w.licenseBenefit(t, vars{"prefix": "team"})
	p := w.s.NewProduct(t, w.org.ID, "Team plan", lk.ID)
	buyer := w.s.NewCustomer(t, w.org.ID, "")
	subID := w.s.NewSubscription(t, w.org.ID, buyer.ID, p.ID, ptr(3))
	_, token := w.assign(t, vars{"subscriptionId": subID, "email": "kept@example.com"})
	w.claim(t, token)
	w.assign(t, vars{"subscriptionId": subID, "email": "pending@example.com"})
	before := w.events(t)["customer_seat.revoked"]

	w.s.Query(t, w.org.Token, `mutation($id: UUID!) { revokeSubscription(input: {id: $id}) { id } }`, vars{"id": subID}, nil)

	var open int
	w.s.Get(t, &open, `SELECT count(*) FROM customer_seats WHERE subscription_id = $1 AND status <> 'revoked'`, subID)
	if open != 0 {
		t.Errorf("%d seats still open after the subscription ended", open)
	}
	if got := w.events(t)["customer_seat.revoked"] - before; got != 2 {
		t.Errorf("%d customer_seat.revoked events, want 2", got)
	}
	for _, g := range w.grants(t, lk.ID, nil) {
		if g.IsGranted {
			t.Errorf("grant %s of member %v still granted", g.ID, g.MemberID)
		}
	}
}
