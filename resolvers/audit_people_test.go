package resolvers_test

import (
	"testing"

	"github.com/google/uuid"

	"till/resolvers"
	"till/resolvers/resolverstest"
)

func TestAuditRecordsCredentialAndConsentMutations(t *testing.T) {
	t.Parallel()
	s := resolverstest.New(t)
	org := s.NewOrg(t, resolverstest.AllScopes)
	user := s.NewUser(t, resolverstest.UserSpec{Scope: "openid email organizations:write customers:write",
		Orgs: []uuid.UUID{org.ID}})
	_, pat := createPAT(t, s, user.Token, vars{"comment": "ci", "scopes": []string{"customers:write"}})
	client := createOAuth2Client(t, s, user.Token, oauth2ClientInput(nil))
	gone := createOAuth2Client(t, s, user.Token, oauth2ClientInput(vars{"clientName": "Old app"}))
	consent := vars{"input": vars{"clientId": client.Client.ClientID, "scope": "openid email"}}
	runAuditCases(t, s, []auditCase{
		{"creating a personal access token records it without its secret", user.Token, createPATDoc,
			vars{"input": vars{"comment": "deploy", "scopes": []string{"customers:write"}}}, byUser,
			[]auditWant{{"personal_access_token", created, "token", uuid.Nil}}},
		{"revoking a personal access token records a delete", user.Token, revokePATDoc, vars{"id": pat.ID}, byUser,
			[]auditWant{{"personal_access_token", deleted, "deleted_at", pat.ID}}},
		{"registering an OAuth2 application records it and redacts its secret", user.Token, createOAuth2ClientDoc,
			vars{"input": oauth2ClientInput(vars{"clientName": "New app"})}, byUser,
			[]auditWant{{"oauth2_client", created, "client_secret_hash", uuid.Nil}}},
		{"renaming an OAuth2 application records the name", user.Token, updateOAuth2ClientDoc,
			vars{"clientId": client.Client.ClientID, "input": vars{"clientName": "Renamed"}}, byUser,
			[]auditWant{{"oauth2_client", updated, "client_name", uuid.Nil}}},
		{"rotating an OAuth2 application's secret records that it changed", user.Token, rotateOAuth2ClientDoc,
			vars{"clientId": client.Client.ClientID}, byUser, []auditWant{{"oauth2_client", updated, "client_secret_hash", uuid.Nil}}},
		{"deleting an OAuth2 application records a delete", user.Token, deleteOAuth2ClientDoc,
			vars{"clientId": gone.Client.ClientID}, byUser, []auditWant{{"oauth2_client", deleted, "deleted_at", uuid.Nil}}},
		{"consenting to an application records the remembered grant", user.Token,
			`mutation($input: AuthorizeOAuth2Input!) { authorizeOAuth2(input: $input) { code } }`, consent, byUser,
			[]auditWant{{"oauth2_grant", created, "scope", uuid.Nil}}},
		{"denying an application records nothing: nothing changed", user.Token,
			`mutation($input: AuthorizeOAuth2Input!) { denyOAuth2(input: $input) { redirectUrl } }`, consent, byUser, nil},
	})
}

func TestAuditRecordsBuyerAndSeatMutations(t *testing.T) {
	t.Parallel()
	w := newGrantWorld(t)
	tok := w.org.Token
	team := w.s.NewProduct(t, w.org.ID, "Team plan", w.licenseBenefit(t, vars{"prefix": "team"}).ID)
	buyer := w.s.NewCustomer(t, w.org.ID, "")
	subID := w.s.NewSubscription(t, w.org.ID, buyer.ID, team.ID, ptr(2))
	w.grant(t, resolvers.GrantScope{CustomerID: buyer.ID, ProductID: team.ID, SubscriptionID: &subID})
	ada, adaToken := w.assign(t, vars{"subscriptionId": subID, "email": "ada@example.com"})
	book := w.s.NewProduct(t, w.org.ID, "Book")
	ck := ckNewCheckout(t, w.s, tok, vars{"products": []uuid.UUID{book.ID}})
	runAuditCases(t, w.s, []auditCase{
		{"assigning a seat records it without its invitation token", tok, assignSeat,
			vars{"in": vars{"subscriptionId": subID, "email": "bob@example.com"}}, byOrg,
			[]auditWant{{"customer_seat", created, "invitation_token", uuid.Nil}}},
		{"claiming a seat records it claimed by an anonymous caller", "", claimSeat, vars{"t": adaToken}, byAnyone,
			[]auditWant{{"customer_seat", updated, "status", ada.ID}, {"member_session", created, "token", uuid.Nil}}},
		{"revoking a seat records its status", tok, revokeSeat, vars{"id": ada.ID}, byOrg,
			[]auditWant{{"customer_seat", updated, "status", ada.ID}}},
		{"a buyer confirming a checkout records the purchase as an anonymous caller's", "", `mutation($s: String!) {
			confirmCheckout(input: {clientSecret: $s, paymentToken: "tok_visa", customerEmail: "buyer@example.com"}) { id } }`,
			vars{"s": ck.ClientSecret}, byAnyone, []auditWant{{"checkout", updated, "status", ck.ID},
				{"customer", created, "email", uuid.Nil}, {"order", created, "total_amount", uuid.Nil},
				{"payment", created, "amount", uuid.Nil}}},
	})
}
