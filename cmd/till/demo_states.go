package main

import (
	"context"
	"errors"
	"time"

	"github.com/google/uuid"

	"till/internal/payment"
	"till/resolvers"
)

// purchase is what a confirmed demo checkout produced.
type purchase struct {
	CheckoutID     uuid.UUID
	CustomerID     uuid.UUID
	OrderID        uuid.UUID
	SubscriptionID *uuid.UUID
}

// checkoutAndConfirm opens a checkout for one product and confirms it with a test token.
func checkoutAndConfirm(s demoSession, key, email, name string, productID uuid.UUID, token string, extra map[string]any) (*purchase, error) {
	in := map[string]any{"products": []any{productID}, "customerEmail": email, "customerName": name}
	for k, v := range extra {
		in[k] = v
	}
	var created struct{ CreateCheckout idOnly }
	if err := s.run(`mutation($in: CheckoutCreateInput!) { createCheckout(input: $in) { id } }`, map[string]any{"in": in}, &created); err != nil {
		return nil, err
	}
	var confirmed struct {
		ConfirmCheckout struct {
			Status         string
			CustomerID     *uuid.UUID
			SubscriptionID *uuid.UUID
		}
	}
	if err := s.run(`mutation($id: UUID!, $token: String!) { confirmCheckout(input: {id: $id, paymentToken: $token}) { status customerId subscriptionId } }`,
		map[string]any{"id": created.CreateCheckout.ID, "token": token}, &confirmed); err != nil {
		return nil, err
	}
	c := confirmed.ConfirmCheckout
	if c.Status != "succeeded" || c.CustomerID == nil {
		return nil, errors.New("checkout of " + key + " ended " + c.Status)
	}
	p := &purchase{CheckoutID: created.CreateCheckout.ID, CustomerID: *c.CustomerID, SubscriptionID: c.SubscriptionID}
	var orders struct {
		Orders struct{ Items []idOnly }
	}
	if err := s.run(`query($id: UUID!) { orders(filter: {checkoutId: [$id]}) { items { id } } }`,
		map[string]any{"id": p.CheckoutID}, &orders); err != nil {
		return nil, err
	}
	if len(orders.Orders.Items) > 0 {
		p.OrderID = orders.Orders.Items[0].ID
	}
	return p, nil
}

// demoStates moves the purchases into the states a newcomer should see: a license key with
// activations, claimed and pending seats, a renewal that failed (past_due), a subscription
// canceling at period end, a revoked one, a trialing one, a declined and an open checkout,
// and the portal sessions.
func demoStates(ctx context.Context, r *resolvers.Resolver, s demoSession, orgID uuid.UUID, bought map[string]*purchase, out *demoOutput) error {
	var keys struct {
		LicenseKeys struct {
			Items []struct {
				ID         uuid.UUID
				Key        string
				CustomerID uuid.UUID
			}
		}
	}
	if err := s.run(`{ licenseKeys(limit: 100) { items { id key customerId } } }`, nil, &keys); err != nil {
		return err
	}
	for _, k := range keys.LicenseKeys.Items {
		if k.CustomerID == bought["alice"].CustomerID {
			out.LicenseKeys["alice"] = k.ID.String()
			for _, machine := range []string{"alice-laptop", "alice-desktop"} {
				if err := s.run(`mutation($in: LicenseKeyActivateInput!) { activateLicenseKey(input: $in) { id } }`,
					map[string]any{"in": map[string]any{"key": k.Key, "organizationId": orgID, "label": machine,
						"meta": map[string]any{"os": "linux"}}}, nil); err != nil {
					return err
				}
			}
		}
	}

	erin := bought["erin"].SubscriptionID
	var seat struct {
		AssignSeat struct {
			Seat            idOnly
			InvitationToken string
		}
	}
	for i, email := range []string{"erin.dev@demo.test", "erin.ops@demo.test"} {
		if err := s.run(`mutation($sub: UUID!, $email: String!) { assignSeat(input: {subscriptionId: $sub, email: $email}) { seat { id } invitationToken } }`,
			map[string]any{"sub": erin, "email": email}, &seat); err != nil {
			return err
		}
		out.Seats[email] = seat.AssignSeat.Seat.ID.String()
		if i == 0 {
			var claim struct {
				ClaimSeat struct{ CustomerSessionToken string }
			}
			if err := s.run(`mutation($t: String!) { claimSeat(input: {invitationToken: $t}) { customerSessionToken } }`,
				map[string]any{"t": seat.AssignSeat.InvitationToken}, &claim); err != nil {
				return err
			}
			out.MemberSessionToken = claim.ClaimSeat.CustomerSessionToken
		}
	}

	// A month passes on the organization's test clock: renewals run, Carol's card declines.
	if err := s.run(`mutation($to: DateTime!) { advanceTestClock(input: {to: $to}) { renewals } }`,
		map[string]any{"to": r.Now().Add(32 * 24 * time.Hour).UTC().Format(time.RFC3339)}, nil); err != nil {
		return err
	}

	more := []struct {
		key, email, product string
		extra               map[string]any
	}{
		{"gina", "gina@demo.test", "recurring", map[string]any{"allowTrial": true}},
		{"hank", "hank@demo.test", "recurring", map[string]any{"allowTrial": false}},
		{"ivy", "ivy@demo.test", "recurring", map[string]any{"allowTrial": false}},
	}
	for _, m := range more {
		p, err := checkoutAndConfirm(s, m.key, m.email, m.key, uuid.MustParse(out.Products[m.product]), payment.TokenVisa, m.extra)
		if err != nil {
			return err
		}
		bought[m.key] = p
		out.Customers[m.key], out.Checkouts[m.key] = p.CustomerID.String(), p.CheckoutID.String()
		out.Orders[m.key] = p.OrderID.String()
		if p.SubscriptionID != nil {
			out.Subscriptions[m.key] = p.SubscriptionID.String()
		}
	}
	if err := s.run(`mutation($id: UUID!) { cancelSubscription(input: {id: $id, customerCancellationReason: too_expensive, customerCancellationComment: "Trying a cheaper plan"}) { id } }`,
		map[string]any{"id": bought["hank"].SubscriptionID}, nil); err != nil {
		return err
	}
	if err := s.run(`mutation($id: UUID!) { revokeSubscription(input: {id: $id}) { id } }`,
		map[string]any{"id": bought["ivy"].SubscriptionID}, nil); err != nil {
		return err
	}

	var declined, open struct{ CreateCheckout idOnly }
	if err := s.run(`mutation($p: UUID!) { createCheckout(input: {products: [$p], customerEmail: "declined@demo.test"}) { id } }`,
		map[string]any{"p": out.Products["one_time"]}, &declined); err != nil {
		return err
	}
	// The decline is the expected outcome; the checkout is left failed.
	_ = s.run(`mutation($id: UUID!) { confirmCheckout(input: {id: $id, paymentToken: "`+payment.TokenChargeDeclined+`"}) { status } }`,
		map[string]any{"id": declined.CreateCheckout.ID}, nil)
	out.Checkouts["declined"] = declined.CreateCheckout.ID.String()
	if err := s.run(`mutation($p: UUID!) { createCheckout(input: {products: [$p]}) { id } }`,
		map[string]any{"p": out.Products["one_time"]}, &open); err != nil {
		return err
	}
	out.Checkouts["open"] = open.CreateCheckout.ID.String()

	var session struct{ CreateCustomerSession struct{ Token string } }
	if err := s.run(`mutation($id: UUID!) { createCustomerSession(input: {customerId: $id}) { token } }`,
		map[string]any{"id": bought["alice"].CustomerID}, &session); err != nil {
		return err
	}
	out.CustomerSessionToken = session.CreateCustomerSession.Token
	out.Try = []string{
		"curl -s $TILL/v1/orders/ -H 'Authorization: Bearer <organization_token>'",
		"curl -s '$TILL/v1/subscriptions/?status=past_due' -H 'Authorization: Bearer <organization_token>'",
		"curl -s $TILL/v1/benefits/<benefits.license_keys>/grants -H 'Authorization: Bearer <organization_token>'",
		"curl -s $TILL/v1/customer-portal/orders/ -H 'Authorization: Bearer <customer_session_token>'",
		"curl -s $TILL/v1/customer-portal/seats/subscriptions -H 'Authorization: Bearer <member_session_token>'",
	}
	return nil
}
