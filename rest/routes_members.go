package rest

import (
	"net/http"

	"till/rest/fastapi"
)

// memberRoutes serve the members of customers: the organization's list and the customer's
// member CRUD by id or external id, and the portal's team management.
//
// Where upstream's server differs from the published document or from what the document
// leaves open:
//   - GET /v1/members/ takes customer_id as text: a value that is not a UUID answers 404
//     ResourceNotFound "Invalid customer ID format", not a 422.
//   - POST .../members with the email of a live member of the customer answers 201 with that
//     member as it is, and announces nothing.
//   - POST .../members on an individual customer answers 403 NotPermitted: its owner is its
//     only member. Upstream's 403 for organizations without the member model or seat-based
//     pricing does not arise: every customer has the member model (its owner shows it).
//   - An external_id already held by another member of the customer answers 422 on
//     body.external_id, where upstream fails with a 500.
//   - PATCH with role owner transfers the ownership (the owner becomes billing_manager);
//     demoting the owner otherwise answers 422 on body.role, changing the email of an
//     individual customer's owner 422 on body.email (it follows the customer's email).
//   - DELETE of the owner answers 422 PolarRequestValidationError at loc ["body"], though the
//     request has no body.
//   - The external variants answer 409 AmbiguousExternalCustomerID when the external id names
//     customers of several organizations of a user token; the 404 of a missing member says
//     "Member not found", of a missing customer on creation "Customer not found".
//   - The portal routes serve member sessions of owners and billing managers only: a customer
//     session is 401 Unauthorized, a plain member 403 NotPermitted "Insufficient role for
//     this operation", a member of an individual customer 403 NotPermitted. The portal's
//     POST adds no member.created event; its 400s are 422s (loc ["path", "id"] when one
//     changes one's own role or removes oneself).
func memberRoutes() []Route {
	memberUpdate := fastapi.Object{Name: "MemberUpdate", Fields: []fastapi.Field{
		{Name: "name", Schema: fastapi.Nullable{Schema: fastapi.String{MaxLength: 256}}},
		{Name: "email", Schema: fastapi.Nullable{Schema: fastapi.String{}}},
		{Name: "role", Schema: fastapi.Nullable{Schema: memberRole()}},
	}}
	memberCreate := fastapi.Object{Name: "MemberCreateFromCustomer", Fields: []fastapi.Field{
		{Name: "email", Schema: fastapi.String{}, Required: true},
		{Name: "name", Schema: fastapi.Nullable{Schema: fastapi.String{MaxLength: 256}}},
		{Name: "external_id", Schema: fastapi.Nullable{Schema: fastapi.String{}}},
		{Name: "role", Schema: fastapi.EnumLiteral{Enum: "MemberRole", Values: []string{"member", "billing_manager"}}},
	}}
	id, externalID := PathUUID4("id", "customerId"), PathString("external_id", "externalCustomerId")
	memberID, memberExternalID := PathUUID4("member_id", "memberId"), PathString("member_external_id", "externalId")
	return []Route{
		{Method: http.MethodGet, Path: "/v1/members/", Operation: "ListMembers", Field: "members", Params: []fastapi.Param{
			Page(), Limit(), Sorting("created_at"),
			Query("customer_id", "customerId", fastapi.Nullable{Schema: fastapi.String{}}),
			Query("external_customer_id", "externalCustomerId", fastapi.Nullable{Schema: fastapi.String{}}),
			Query("role", "role", fastapi.Nullable{Schema: memberRole()}),
		}},
		{Method: http.MethodPost, Path: "/v1/customers/{id}/members", Operation: "CreateMember", Field: "createMember",
			Status: http.StatusCreated, Params: []fastapi.Param{PathUUID4("id", "input.customerId")},
			Body: &fastapi.Body{Var: "input", Schema: memberCreate}},
		{Method: http.MethodPost, Path: "/v1/customers/external/{external_id}/members", Operation: "CreateMember",
			Field: "createMember", Status: http.StatusCreated, Params: []fastapi.Param{PathString("external_id", "input.externalCustomerId")},
			Body: &fastapi.Body{Var: "input", Schema: memberCreate}},
		{Method: http.MethodGet, Path: "/v1/customers/{id}/members/{member_id}", Operation: "GetCustomerMember",
			Field: "customerMember", Params: []fastapi.Param{id, memberID}},
		{Method: http.MethodGet, Path: "/v1/customers/external/{external_id}/members/{member_external_id}",
			Operation: "GetCustomerMember", Field: "customerMember", Params: []fastapi.Param{externalID, memberExternalID}},
		{Method: http.MethodPatch, Path: "/v1/customers/{id}/members/{member_id}", Operation: "UpdateMember",
			Field: "updateMember", Params: []fastapi.Param{PathUUID4("id", "input.member.customerId"),
				PathUUID4("member_id", "input.member.id")}, Body: &fastapi.Body{Var: "input", Schema: memberUpdate}},
		{Method: http.MethodPatch, Path: "/v1/customers/external/{external_id}/members/{member_external_id}",
			Operation: "UpdateMember", Field: "updateMember", Params: []fastapi.Param{
				PathString("external_id", "input.member.externalCustomerId"), PathString("member_external_id", "input.member.externalId")},
			Body: &fastapi.Body{Var: "input", Schema: memberUpdate}},
		{Method: http.MethodDelete, Path: "/v1/customers/{id}/members/{member_id}", Operation: "DeleteMember",
			Status: http.StatusNoContent, Params: []fastapi.Param{id, memberID}},
		{Method: http.MethodDelete, Path: "/v1/customers/external/{external_id}/members/{member_external_id}",
			Operation: "DeleteMember", Status: http.StatusNoContent, Params: []fastapi.Param{externalID, memberExternalID}},

		{Method: http.MethodGet, Path: "/v1/customer-portal/members", Operation: "PortalListMembers", Field: "me.members",
			Params: []fastapi.Param{Page(), Limit()}},
		{Method: http.MethodPost, Path: "/v1/customer-portal/members", Operation: "PortalAddMember", Field: "portalAddMember",
			Status: http.StatusCreated, Body: &fastapi.Body{Var: "input", Schema: fastapi.Object{Name: "CustomerPortalMemberCreate",
				Fields: []fastapi.Field{
					{Name: "email", Schema: fastapi.String{}, Required: true},
					{Name: "name", Schema: fastapi.Nullable{Schema: fastapi.String{}}},
					{Name: "role", Schema: memberRole()},
				}}}},
		{Method: http.MethodPatch, Path: "/v1/customer-portal/members/{id}", Operation: "PortalUpdateMember",
			Field: "portalUpdateMember", Params: []fastapi.Param{PathUUID4("id", "input.id")},
			Body: &fastapi.Body{Var: "input", Schema: fastapi.Object{Name: "CustomerPortalMemberUpdate", Fields: []fastapi.Field{
				{Name: "name", Schema: fastapi.Nullable{Schema: fastapi.String{MaxLength: 256}}},
				{Name: "role", Schema: fastapi.Nullable{Schema: memberRole()}},
			}}}},
		{Method: http.MethodDelete, Path: "/v1/customer-portal/members/{id}", Operation: "PortalRemoveMember",
			Status: http.StatusNoContent, Params: []fastapi.Param{PathUUID4("id", "input.id")}},
	}
}

// memberRole is the MemberRole enum.
func memberRole() fastapi.Enum {
	return fastapi.Enum{Name: "MemberRole", Values: []string{"owner", "billing_manager", "member"}}
}
