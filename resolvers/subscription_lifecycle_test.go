package resolvers_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"till/internal/payment"
)

// TestSubscriptionStateMachine walks every lifecycle change from every state it can meet:
// allowed transitions change the status and flags and record their events; forbidden ones
// fail with a clear error and leave the row exactly as it was.
func TestSubscriptionStateMachine(t *testing.T) {
	t.Parallel()
	// States are reached the way production reaches them where an API exists, by SQL otherwise.
	states := map[string]func(t *testing.T, w *subWorld, s subView){
		"active": func(*testing.T, *subWorld, subView) {},
		"trialing": func(t *testing.T, w *subWorld, s subView) {
			w.s.Exec(t, `UPDATE subscriptions SET status = 'trialing', trial_start = current_period_start,
				trial_end = current_period_end WHERE id = $1`, s.ID)
		},
		"canceling": func(t *testing.T, w *subWorld, s subView) {
			w.mutate(t, w.org.Token, "cancelSubscription", vars{"id": s.ID})
		},
		"pausing": func(t *testing.T, w *subWorld, s subView) {
			w.mutate(t, w.org.Token, "pauseSubscription", vars{"id": s.ID})
		},
		"paused": func(t *testing.T, w *subWorld, s subView) {
			w.s.Exec(t, `UPDATE subscriptions SET status = 'paused', paused_at = current_period_start WHERE id = $1`, s.ID)
		},
		"past_due": func(t *testing.T, w *subWorld, s subView) {
			w.s.Exec(t, `UPDATE subscriptions SET status = 'past_due', past_due_at = current_period_start WHERE id = $1`, s.ID)
		},
		"canceled": func(t *testing.T, w *subWorld, s subView) {
			w.mutate(t, w.org.Token, "revokeSubscription", vars{"id": s.ID})
		},
		"unpaid": func(t *testing.T, w *subWorld, s subView) {
			w.s.Exec(t, `UPDATE subscriptions SET status = 'unpaid', ended_at = current_period_start WHERE id = $1`, s.ID)
		},
	}
	type want struct {
		status            string
		cancelAtPeriodEnd bool
		pauseAtPeriodEnd  bool
		ended             bool
		events            []string // recorded by the change itself
	}
	updated, canceled, revoked := "subscription.updated", "subscription.canceled", "subscription.revoked"
	tests := []struct {
		state, mutation string
		input           vars // besides the id
		want            want
		errCode         string // when the change must fail
	}{
		{state: "active", mutation: "cancelSubscription", input: vars{"customerCancellationReason": "too_expensive",
			"customerCancellationComment": "Pricey"},
			want: want{status: "active", cancelAtPeriodEnd: true, events: []string{updated, canceled}}},
		{state: "trialing", mutation: "cancelSubscription",
			want: want{status: "trialing", cancelAtPeriodEnd: true, events: []string{updated, canceled}}},
		{state: "past_due", mutation: "cancelSubscription",
			want: want{status: "past_due", cancelAtPeriodEnd: true, events: []string{updated, canceled}}},
		{state: "paused", mutation: "cancelSubscription",
			want: want{status: "canceled", ended: true, events: []string{updated, canceled, revoked}}},
		{state: "pausing", mutation: "cancelSubscription",
			want: want{status: "active", cancelAtPeriodEnd: true, events: []string{updated, canceled}}},
		{state: "canceling", mutation: "cancelSubscription", errCode: "BadRequest"},
		{state: "canceled", mutation: "cancelSubscription", errCode: "BadRequest"},
		{state: "unpaid", mutation: "cancelSubscription", errCode: "BadRequest"},

		{state: "canceling", mutation: "uncancelSubscription",
			want: want{status: "active", events: []string{updated, "subscription.uncanceled"}}},
		{state: "active", mutation: "uncancelSubscription", errCode: "BadRequest"},
		{state: "canceled", mutation: "uncancelSubscription", errCode: "BadRequest"},

		{state: "active", mutation: "revokeSubscription",
			want: want{status: "canceled", ended: true, events: []string{updated, canceled, revoked}}},
		{state: "canceling", mutation: "revokeSubscription",
			want: want{status: "canceled", cancelAtPeriodEnd: true, ended: true, events: []string{updated, revoked}}},
		{state: "past_due", mutation: "revokeSubscription",
			want: want{status: "canceled", ended: true, events: []string{updated, canceled, revoked}}},
		{state: "paused", mutation: "revokeSubscription",
			want: want{status: "canceled", ended: true, events: []string{updated, canceled, revoked}}},
		{state: "canceled", mutation: "revokeSubscription", errCode: "BadRequest"},
		{state: "unpaid", mutation: "revokeSubscription", errCode: "BadRequest"},

		{state: "active", mutation: "pauseSubscription",
			want: want{status: "active", pauseAtPeriodEnd: true, events: []string{updated}}},
		{state: "trialing", mutation: "pauseSubscription",
			want: want{status: "trialing", pauseAtPeriodEnd: true, events: []string{updated}}},
		{state: "pausing", mutation: "pauseSubscription", errCode: "BadRequest"},
		{state: "paused", mutation: "pauseSubscription", errCode: "BadRequest"},
		{state: "canceling", mutation: "pauseSubscription", errCode: "BadRequest"},
		{state: "past_due", mutation: "pauseSubscription", errCode: "BadRequest"},
		{state: "canceled", mutation: "pauseSubscription", errCode: "BadRequest"},

		{state: "pausing", mutation: "resumeSubscription",
			want: want{status: "active", events: []string{updated}}},
		{state: "paused", mutation: "resumeSubscription",
			want: want{status: "active", events: []string{updated, "subscription.cycled", "subscription.resumed"}}},
		{state: "active", mutation: "resumeSubscription", errCode: "BadRequest"},
		{state: "canceled", mutation: "resumeSubscription", errCode: "BadRequest"},

		{state: "canceled", mutation: "updateSubscriptionSeats", input: vars{"seats": 2}, errCode: "BadRequest"},
		{state: "active", mutation: "updateSubscriptionSeats", input: vars{"seats": 2}, errCode: "BadRequest"},
		{state: "canceled", mutation: "updateSubscriptionProduct", errCode: "BadRequest"},
		{state: "unpaid", mutation: "updateSubscriptionProduct", errCode: "BadRequest"},
		{state: "canceling", mutation: "updateSubscriptionProduct", errCode: "BadRequest"},
		{state: "past_due", mutation: "updateSubscriptionProduct", errCode: "BadRequest"},
		{state: "paused", mutation: "updateSubscriptionProduct", errCode: "BadRequest"},
	}
	w := newSubWorld(t, payment.TokenVisa)
	other := createProduct(t, w.s, w.org.Token, vars{"name": "Team plan", "recurringInterval": "month",
		"prices": []vars{{"amountType": "fixed", "priceAmount": 3000}}})
	for _, tc := range tests {
		verb := "succeeds"
		if tc.errCode != "" {
			verb = "fails with " + tc.errCode
		}
		article := "a "
		if strings.ContainsAny(tc.state[:1], "aeiou") {
			article = "an "
		}
		t.Run(tc.mutation+" of "+article+tc.state+" subscription "+verb, func(t *testing.T) {
			s := w.subscribePlan(t)
			states[tc.state](t, w, s)
			input := vars{"id": s.ID}
			if tc.mutation == "updateSubscriptionProduct" {
				input["productId"] = other.ID
			}
			for k, v := range tc.input {
				input[k] = v
			}
			before, eventsBefore := w.s.Row(t, "subscriptions", s.ID), len(w.events(t, s.ID))
			if tc.errCode != "" {
				e := w.mutateError(t, w.org.Token, tc.mutation, input)
				if e.Extensions.Code != "BAD_USER_INPUT" || e.Extensions.Reason != tc.errCode {
					t.Fatalf("error = %s (%s) %q, want BAD_USER_INPUT (%s)", e.Extensions.Code, e.Extensions.Reason, e.Message, tc.errCode)
				}
				if after := w.s.Row(t, "subscriptions", s.ID); after != before {
					t.Errorf("a refused change wrote:\nbefore %s\nafter  %s", before, after)
				}
				if n := len(w.events(t, s.ID)); n != eventsBefore {
					t.Errorf("a refused change recorded %d events", n-eventsBefore)
				}
				return
			}
			got := w.mutate(t, w.org.Token, tc.mutation, input)
			if got.Status != tc.want.status || got.CancelAtPeriodEnd != tc.want.cancelAtPeriodEnd ||
				got.PauseAtPeriodEnd != tc.want.pauseAtPeriodEnd || (got.EndedAt != nil) != tc.want.ended {
				t.Errorf("got status %s, cancelAtPeriodEnd %v, pauseAtPeriodEnd %v, endedAt %v; want %+v",
					got.Status, got.CancelAtPeriodEnd, got.PauseAtPeriodEnd, got.EndedAt, tc.want)
			}
			if diff := cmp.Diff(tc.want.events, w.events(t, s.ID)[eventsBefore:]); diff != "" {
				t.Errorf("events (-want +got):\n%s", diff)
			}
		})
	}
}

// TestSubscriptionLifecycleDetails pins what the transitions write beyond the status.
func TestSubscriptionLifecycleDetails(t *testing.T) {
	t.Parallel()
	w := newSubWorld(t, payment.TokenVisa)

	t.Run("cancel keeps the customer's reason and ends at the period end; uncancel clears them", func(t *testing.T) {
		s := w.subscribePlan(t)
		got := w.mutate(t, w.org.Token, "cancelSubscription", vars{"id": s.ID,
			"customerCancellationReason": "too_expensive", "customerCancellationComment": "Pricey"})
		if got.CanceledAt == nil || !got.CanceledAt.Equal(subBase) || got.EndsAt == nil || !got.EndsAt.Equal(s.CurrentPeriodEnd) ||
			got.CustomerCancellationReason == nil || *got.CustomerCancellationReason != "too_expensive" ||
			got.CustomerCancellationComment == nil || *got.CustomerCancellationComment != "Pricey" {
			t.Errorf("canceled: canceledAt %v endsAt %v reason %v comment %v", got.CanceledAt, got.EndsAt,
				got.CustomerCancellationReason, got.CustomerCancellationComment)
		}
		if got := w.grantedBenefits(t, s.ID); len(got) != 1 {
			t.Errorf("benefits before the period end: %v, want still granted", got)
		}
		got = w.mutate(t, w.org.Token, "uncancelSubscription", vars{"id": s.ID})
		if got.CanceledAt != nil || got.EndsAt != nil || got.CustomerCancellationReason != nil || got.CustomerCancellationComment != nil {
			t.Errorf("uncanceled: %+v", got)
		}
	})

	t.Run("revoke ends the subscription at the clock's time and revokes its benefits", func(t *testing.T) {
		s := w.subscribePlan(t)
		got := w.mutate(t, w.org.Token, "revokeSubscription", vars{"id": s.ID, "customerCancellationReason": "unused"})
		if got.EndedAt == nil || !got.EndedAt.Equal(subBase) || got.EndsAt == nil || !got.EndsAt.Equal(subBase) ||
			got.CanceledAt == nil || *got.CustomerCancellationReason != "unused" {
			t.Errorf("revoked: endedAt %v endsAt %v canceledAt %v", got.EndedAt, got.EndsAt, got.CanceledAt)
		}
		if got := w.grantedBenefits(t, s.ID); len(got) != 0 {
			t.Errorf("benefits still granted after revoke: %v", got)
		}
	})

	t.Run("resuming a paused subscription starts a charged period now and grants again", func(t *testing.T) {
		s := w.subscribePlan(t)
		w.s.Exec(t, `UPDATE subscriptions SET status = 'paused', paused_at = current_period_start WHERE id = $1`, s.ID)
		w.s.Exec(t, `UPDATE benefit_grants SET granted_at = NULL, revoked_at = now() WHERE subscription_id = $1`, s.ID)
		got := w.mutate(t, w.org.Token, "resumeSubscription", vars{"id": s.ID})
		if got.Status != "active" || got.PausedAt != nil || !got.CurrentPeriodStart.Equal(subBase) ||
			!got.CurrentPeriodEnd.Equal(time.Date(2030, 2, 28, 12, 0, 0, 0, time.UTC)) {
			t.Errorf("resumed: %+v", got)
		}
		if orders := w.orders(t, s.ID); len(orders) != 1 || orders[0].Status != "paid" || orders[0].TotalAmount != 1000 {
			t.Errorf("orders after resume: %+v", orders)
		}
		if got := w.grantedBenefits(t, s.ID); len(got) != 1 {
			t.Errorf("benefits after resume: %v", got)
		}
	})

	t.Run("an unknown id or another organization's subscription is not found", func(t *testing.T) {
		s := w.subscribePlan(t)
		stranger := w.s.NewOrg(t, "subscriptions:write")
		for _, mutation := range []string{"cancelSubscription", "uncancelSubscription", "revokeSubscription",
			"pauseSubscription", "resumeSubscription"} {
			e := w.mutateError(t, stranger.Token, mutation, vars{"id": s.ID})
			wantError(t, e, "NOT_FOUND", "ResourceNotFound")
		}
	})

	t.Run("the mutations need subscriptions:write", func(t *testing.T) {
		s := w.subscribePlan(t)
		reader := w.s.NewToken(t, w.org.ID, "subscriptions:read")
		e := w.mutateError(t, reader, "cancelSubscription", vars{"id": s.ID})
		wantError(t, e, "FORBIDDEN", "insufficient_scope")
	})
}

// TestPortalSubscriptionChanges covers the customer's own changes in the portal.
func TestPortalSubscriptionChanges(t *testing.T) {
	t.Parallel()
	w := newSubWorld(t, payment.TokenVisa)
	mine := w.subscribePlan(t)
	someone := w.s.NewCustomer(t, w.org.ID, "")
	theirs := w.subscribe(t, w.plan.ID, someone.ID, nil, 1000, 0, nil)
	session := w.s.NewCustomerSession(t, w.org.ID, w.customer.ID)

	t.Run("a customer cancels and uncancels their own subscription", func(t *testing.T) {
		got := w.mutate(t, session, "portalCancelSubscription", vars{"id": mine.ID, "customerCancellationReason": "unused"})
		if !got.CancelAtPeriodEnd || *got.CustomerCancellationReason != "unused" {
			t.Errorf("portal cancel: %+v", got)
		}
		if got := w.mutate(t, session, "portalUncancelSubscription", vars{"id": mine.ID}); got.CancelAtPeriodEnd {
			t.Errorf("portal uncancel: %+v", got)
		}
	})

	t.Run("another customer's subscription is not found", func(t *testing.T) {
		e := w.mutateError(t, session, "portalCancelSubscription", vars{"id": theirs.ID})
		wantError(t, e, "NOT_FOUND", "ResourceNotFound")
	})

	t.Run("organization tokens cannot use the portal mutations", func(t *testing.T) {
		e := w.mutateError(t, w.org.Token, "portalCancelSubscription", vars{"id": mine.ID})
		wantError(t, e, "FORBIDDEN", "Unauthorized")
	})

	t.Run("plan changes follow the organization's portal settings", func(t *testing.T) {
		team := createProduct(t, w.s, w.org.Token, vars{"name": "Team plan", "recurringInterval": "month",
			"prices": []vars{{"amountType": "fixed", "priceAmount": 3000}}})
		w.s.Exec(t, `UPDATE organizations SET customer_portal_settings = jsonb_set(customer_portal_settings,
			'{subscription,update_plan}', 'false') WHERE id = $1`, w.org.ID)
		before := w.s.Row(t, "subscriptions", mine.ID)
		e := w.mutateError(t, session, "portalUpdateSubscriptionProduct", vars{"id": mine.ID, "productId": team.ID})
		wantError(t, e, "FORBIDDEN", "NotPermitted")
		if w.s.Row(t, "subscriptions", mine.ID) != before {
			t.Error("a refused portal change wrote")
		}
		w.s.Exec(t, `UPDATE organizations SET customer_portal_settings = jsonb_set(customer_portal_settings,
			'{subscription,update_plan}', 'true') WHERE id = $1`, w.org.ID)
		got := w.mutate(t, session, "portalUpdateSubscriptionProduct", vars{"id": mine.ID, "productId": team.ID,
			"prorationBehavior": "prorate"})
		if got.ProductID != team.ID || got.Amount != 3000 {
			t.Errorf("portal product change: %+v", got)
		}
	})
}

// eventsContain reports whether every wanted event type was recorded.
func eventsContain(got []string, want ...string) bool {
	for _, w := range want {
		if !slices.Contains(got, w) {
			return false
		}
	}
	return true
}
