package auth

import (
	"slices"

	"github.com/google/uuid"
)

// Role is what a user is in one organization. A user token's effective rights in an
// organization are its scopes intersected with the permissions of the user's role there:
// the scope says what the credential may touch, the role what the person may do.
type Role string

// The roles, as upstream names them (OrganizationRole). Owners and admins hold the same
// permissions; owners differ by invariants only: an organization always keeps one, and only
// an owner may make or unmake another.
const (
	RoleOwner   Role = "owner"
	RoleAdmin   Role = "admin"
	RoleMember  Role = "member"
	RoleFinance Role = "finance"
)

// Roles lists every role, most powerful first: the order a role picker shows.
func Roles() []Role { return []Role{RoleOwner, RoleAdmin, RoleMember, RoleFinance} }

// Known reports whether r is one of [Roles], so input naming another is refused before it
// reaches the database's own check.
func (r Role) Known() bool { return slices.Contains(Roles(), r) }

// Permission is one thing a role lets a user do in an organization, in upstream's vocabulary
// (OrganizationPermission, server/polar/auth/permission.py). Every operation on organization
// data declares the one it needs on the schema.
type Permission string

// The permissions, with upstream's strings.
const (
	PermissionOrganizationManage Permission = "organization:manage"
	PermissionMembersRead        Permission = "members:read"
	PermissionMembersManage      Permission = "members:manage"
	PermissionProductsRead       Permission = "products:read"
	PermissionProductsManage     Permission = "products:manage"
	PermissionCustomFieldsRead   Permission = "custom_fields:read"
	PermissionCustomFieldsManage Permission = "custom_fields:manage"
	PermissionCustomersRead      Permission = "customers:read"
	PermissionCustomersManage    Permission = "customers:manage"
	PermissionSalesRead          Permission = "sales:read"
	PermissionSalesManage        Permission = "sales:manage"
	PermissionAnalyticsRead      Permission = "analytics:read"
	PermissionAnalyticsManage    Permission = "analytics:manage"
	// PermissionEventsIngest is granted to every role but finance: applications and
	// integrations commonly run as member-role users.
	PermissionEventsIngest  Permission = "events:ingest"
	PermissionFinanceRead   Permission = "finance:read"
	PermissionFinanceManage Permission = "finance:manage"
)

// Permissions lists every permission in upstream's order.
func Permissions() []Permission {
	return []Permission{PermissionOrganizationManage, PermissionMembersRead, PermissionMembersManage,
		PermissionProductsRead, PermissionProductsManage, PermissionCustomFieldsRead, PermissionCustomFieldsManage,
		PermissionCustomersRead, PermissionCustomersManage, PermissionSalesRead, PermissionSalesManage,
		PermissionAnalyticsRead, PermissionAnalyticsManage, PermissionEventsIngest,
		PermissionFinanceRead, PermissionFinanceManage}
}

// memberPermissions are what a member may do: everything about the catalog, customers and
// sales, nothing about the organization itself, its people or its money.
var memberPermissions = []Permission{
	PermissionMembersRead, PermissionProductsRead, PermissionProductsManage,
	PermissionCustomFieldsRead, PermissionCustomFieldsManage, PermissionCustomersRead, PermissionCustomersManage,
	PermissionSalesRead, PermissionSalesManage, PermissionAnalyticsRead, PermissionAnalyticsManage,
	PermissionEventsIngest,
}

// adminOnly are what owners and admins hold beyond a member.
var adminOnly = []Permission{
	PermissionOrganizationManage, PermissionMembersManage, PermissionFinanceRead, PermissionFinanceManage,
}

// financePermissions are a bookkeeper's: reading the catalog, customers and analytics,
// reading and handling sales (refunds, disputes), reading the money.
var financePermissions = []Permission{
	PermissionSalesRead, PermissionSalesManage, PermissionFinanceRead, PermissionCustomersRead,
	PermissionProductsRead, PermissionCustomFieldsRead, PermissionAnalyticsRead,
}

// rolePermissions is upstream's ROLE_PERMISSIONS.
var rolePermissions = map[Role][]Permission{
	RoleOwner:   slices.Concat(memberPermissions, adminOnly),
	RoleAdmin:   slices.Concat(memberPermissions, adminOnly),
	RoleMember:  memberPermissions,
	RoleFinance: financePermissions,
}

// Grants reports whether the role holds p. An unknown role (a principal built without its
// roles) holds nothing, so a forgetful resolver fails closed.
func (r Role) Grants(p Permission) bool {
	return slices.Contains(rolePermissions[r], p)
}

// Exceeds reports whether r holds a permission that role does not: what a principal may not
// hand out when it holds only role.
func (r Role) Exceeds(role Role) bool {
	for _, p := range rolePermissions[r] {
		if !role.Grants(p) {
			return true
		}
	}
	return false
}

// permissionDenied is upstream's PERMISSION_DENIED_MESSAGE.
var permissionDenied = map[Permission]string{
	PermissionOrganizationManage: "You don't have permission to manage the organization",
	PermissionMembersRead:        "You don't have permission to view members",
	PermissionMembersManage:      "You don't have permission to manage members",
	PermissionProductsRead:       "You don't have permission to view products",
	PermissionProductsManage:     "You don't have permission to manage products",
	PermissionCustomFieldsRead:   "You don't have permission to view custom fields",
	PermissionCustomFieldsManage: "You don't have permission to manage custom fields",
	PermissionCustomersRead:      "You don't have permission to view customers",
	PermissionCustomersManage:    "You don't have permission to manage customers",
	PermissionSalesRead:          "You don't have permission to view sales data",
	PermissionSalesManage:        "You don't have permission to manage sales",
	PermissionAnalyticsRead:      "You don't have permission to view analytics",
	PermissionAnalyticsManage:    "You don't have permission to manage analytics",
	PermissionEventsIngest:       "You don't have permission to ingest events",
	PermissionFinanceRead:        "You don't have permission to access financial data",
	PermissionFinanceManage:      "You don't have permission to manage financial data",
}

// DeniedMessage is the detail of the NotPermitted answer to a user whose role lacks p, in
// upstream's words.
func (p Permission) DeniedMessage() string {
	if m, ok := permissionDenied[p]; ok {
		return m
	}
	return "You don't have permission to do this"
}

// OrganizationsGranting splits a user principal's organizations by whether the user's role
// there grants perm: granted are where the user may act, denied where the user belongs but
// may not. Other principals are not subject to roles and get nothing back.
func (p Principal) OrganizationsGranting(perm Permission) (granted, denied []uuid.UUID) {
	if p.Kind != KindUser {
		return nil, nil
	}
	if !slices.ContainsFunc(p.Organizations, func(o uuid.UUID) bool { return !p.Roles[o].Grants(perm) }) {
		return p.Organizations, nil // the common case, decided without allocating
	}
	for _, o := range p.Organizations {
		if p.Roles[o].Grants(perm) {
			granted = append(granted, o)
		} else {
			denied = append(denied, o)
		}
	}
	return granted, denied
}
