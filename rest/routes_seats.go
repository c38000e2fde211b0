package rest

import (
	"net/http"

	"till/rest/fastapi"
)

// seatRoutes serve the seats of seat-based purchases: the organization's assignment, list,
// revocation and invitations, the claim by token (no credential), and the portal's own.
//
// Where upstream's server differs from the published document or from what the document
// leaves open:
//   - GET without subscription_id and order_id answers 400 BadRequest "Either subscription_id
//     or order_id must be provided"; with both, the subscription is listed.
//   - Assignment errors are 400 with upstream's class names (SeatNotAvailable,
//     SeatAlreadyAssigned, InvalidSeatAssignmentRequest, MemberEmailMismatch), 404
//     MemberNotFound for a member that is not the buyer's; a seat claimed at assignment
//     (immediate_claim) carries no invitation.
//   - Resending an invitation sends a new token: only a token's hash is stored, so the
//     previous link stops working (its expiry stays, as upstream's). A seat that is not
//     pending is 400 SeatNotPending.
//   - GET /v1/customer-seats/claim/{invitation_token} answers 404 ResourceNotFound "Invalid or
//     expired invitation token" for a token that cannot be claimed, whatever the reason, and
//     POST /v1/customer-seats/claim 400 InvalidInvitationToken.
//   - Revoking empties the seat (customer_id, member_id and email become null) and revoking a
//     revoked seat answers it as it is.
//   - Upstream's 403 FeatureNotEnabled (seat_based_pricing_enabled) does not arise: a
//     purchase with seats is seat-based.
func seatRoutes() []Route {
	sources := []fastapi.Param{
		Query("subscription_id", "subscriptionId", fastapi.Nullable{Schema: fastapi.UUID4{}}),
		Query("order_id", "orderId", fastapi.Nullable{Schema: fastapi.UUID4{}}),
	}
	seatID := PathUUID4("seat_id", "seatId")
	return []Route{
		{Method: http.MethodPost, Path: "/v1/customer-seats", Operation: "AssignSeat", Field: "assignSeat.seat",
			Body: &fastapi.Body{Var: "input", Schema: seatAssign("SeatAssign", false)}},
		{Method: http.MethodGet, Path: "/v1/customer-seats", Operation: "ListSeats", Field: "seats", Params: sources},
		{Method: http.MethodDelete, Path: "/v1/customer-seats/{seat_id}", Operation: "RevokeSeat", Field: "revokeSeat",
			Params: []fastapi.Param{seatID}},
		{Method: http.MethodPost, Path: "/v1/customer-seats/{seat_id}/resend", Operation: "ResendSeatInvitation",
			Field: "resendSeatInvitation.seat", Params: []fastapi.Param{seatID}},
		{Method: http.MethodGet, Path: "/v1/customer-seats/claim/{invitation_token}", Operation: "SeatClaimInfo",
			Field: "seatClaimInfo", Params: []fastapi.Param{PathString("invitation_token", "invitationToken")}},
		{Method: http.MethodPost, Path: "/v1/customer-seats/claim", Operation: "ClaimSeat", Field: "claimSeat",
			Body: &fastapi.Body{Var: "input", Schema: fastapi.Object{Name: "SeatClaim", Fields: []fastapi.Field{
				{Name: "invitation_token", Schema: fastapi.String{}, Required: true},
			}}}},

		{Method: http.MethodGet, Path: "/v1/customer-portal/seats", Operation: "PortalListSeats", Field: "me.seatList",
			Params: sources},
		{Method: http.MethodPost, Path: "/v1/customer-portal/seats", Operation: "PortalAssignSeat", Field: "portalAssignSeat",
			Body: &fastapi.Body{Var: "input", Schema: seatAssign("CustomerSeatAssign", true)}},
		{Method: http.MethodDelete, Path: "/v1/customer-portal/seats/{seat_id}", Operation: "PortalRevokeSeat",
			Field: "portalRevokeSeat", Params: []fastapi.Param{seatID}},
		{Method: http.MethodPost, Path: "/v1/customer-portal/seats/{seat_id}/resend", Operation: "PortalResendSeatInvitation",
			Field: "portalResendSeatInvitation", Params: []fastapi.Param{seatID}},
	}
}

// seatAssign is SeatAssign, or with checkout CustomerSeatAssign (which also takes a
// checkout_id), with upstream's validators: metadata of at most 10 keys and 1 KB, exactly
// one purchase, and one way of naming the recipient.
func seatAssign(name string, checkout bool) fastapi.Schema {
	nullableUUID := fastapi.Nullable{Schema: fastapi.UUID4{}}
	fields := []fastapi.Field{
		{Name: "subscription_id", Schema: nullableUUID},
		{Name: "order_id", Schema: nullableUUID},
		{Name: "email", Schema: fastapi.Nullable{Schema: fastapi.String{}}},
		{Name: "external_customer_id", Schema: fastapi.Nullable{Schema: fastapi.String{}}},
		{Name: "customer_id", Schema: nullableUUID},
		{Name: "external_member_id", Schema: fastapi.Nullable{Schema: fastapi.String{}}},
		{Name: "member_id", Schema: nullableUUID},
		{Name: "metadata", Schema: fastapi.Nullable{Schema: fastapi.After{Schema: fastapi.Map{}, Check: seatMetadata}}},
		{Name: "immediate_claim", Schema: fastapi.Bool{}},
	}
	sources, sourceMsg := []string{"subscriptionId", "orderId"}, "Exactly one of subscription_id or order_id must be provided"
	if checkout {
		fields = append(fields, fastapi.Field{Name: "checkout_id", Schema: nullableUUID})
		sources = append(sources, "checkoutId")
		sourceMsg = "Exactly one of subscription_id, order_id, or checkout_id must be provided"
	}
	return fastapi.After{Schema: fastapi.Object{Name: name, Fields: fields}, Check: func(v any) string {
		in, _ := v.(map[string]any)
		if given(in, sources...) != 1 {
			return sourceMsg
		}
		return seatRecipient(in)
	}}
}

// seatMetadata is SeatAssign's metadata validator.
func seatMetadata(v any) string {
	m, _ := v.(map[string]any)
	switch {
	case len(m) > 10:
		return "Metadata cannot have more than 10 keys"
	case fastapi.PyDumpsLen(m) > 1024:
		return "Metadata size cannot exceed 1KB"
	}
	return ""
}

// seatRecipient is SeatAssign's validate_recipient.
func seatRecipient(in map[string]any) string {
	customers, members, email := given(in, "externalCustomerId", "customerId"), given(in, "externalMemberId", "memberId"), given(in, "email")
	switch {
	case customers+members+email == 0:
		return "At least one of email, external_customer_id, customer_id, external_member_id, or member_id must be provided"
	case customers > 0 && members > 0:
		return "Cannot combine external_customer_id/customer_id with external_member_id/member_id"
	case members > 1:
		return "Cannot provide both external_member_id and member_id"
	case customers > 0 && customers+email != 1:
		return "Exactly one of email, external_customer_id, or customer_id must be provided"
	case in["memberId"] != nil && email > 0:
		return "Cannot combine member_id with email"
	}
	return ""
}

// given counts the fields of a validated body that hold a value (not absent, not null).
func given(in map[string]any, fields ...string) int {
	n := 0
	for _, f := range fields {
		if in[f] != nil {
			n++
		}
	}
	return n
}
