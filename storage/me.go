package storage

// Me is the portal's root for a session: its customer and, for a member session, its
// member. A portal home whose every field PostgreSQL can write (RenderCustomer) carries
// that JSON instead, and the executor copies it.
type Me struct {
	Rendered
	Customer *Customer `json:"customer"`
	Member   *Member   `json:"member,omitempty"`
}
