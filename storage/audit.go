package storage

import (
	"context"
	"encoding/json"
	"fmt"
	"net/netip"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"
	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"
)

// AuditContext is who makes the changes of a transaction, through what and from where: what
// the audit log records beside each change (migrations/00075_audit_log.sql). The API layers
// put it in a request's context (WithAuditContext); InTx hands it to PostgreSQL as the
// transaction-local setting the audit triggers read, so every change of the transaction is
// recorded with it whichever store function wrote it. A transaction without one, and a
// statement run on the pool outside a transaction, are recorded as the system's.
type AuditContext struct {
	// Kind is the principal's kind (AuditActorKind); empty records system.
	Kind AuditActorKind `json:"kind,omitempty"`
	// UserID, TokenID, OAuthClientID, CustomerID and MemberID identify the principal, as far
	// as its kind has them.
	UserID        uuid.UUID `json:"user,omitzero"`
	TokenID       uuid.UUID `json:"token,omitzero"`
	OAuthClientID string    `json:"client,omitempty"`
	CustomerID    uuid.UUID `json:"customer,omitzero"`
	MemberID      uuid.UUID `json:"member,omitzero"`
	// Operation is the GraphQL root field, the method and path of a /v1 route that runs no
	// GraphQL, or an operator's till command; API is graphql, v1 or cli.
	Operation string `json:"op,omitempty"`
	API       string `json:"api,omitempty"`
	// IP is the client's address, or a network (an IPv6 client's /64); one that does not
	// parse is left out.
	IP string `json:"ip,omitempty"`
	// UserAgent is the client's User-Agent, cut to MaxAuditUserAgent bytes.
	UserAgent string `json:"ua,omitempty"`
	// RequestID joins the record to the request's access log line.
	RequestID string `json:"rid,omitempty"`
}

// MaxAuditUserAgent bounds the user agent kept per change: clients choose it freely.
const MaxAuditUserAgent = 512

type auditKey struct{}

// WithAuditContext returns ctx carrying a, for InTx to apply to the transactions begun with it.
func WithAuditContext(ctx context.Context, a AuditContext) context.Context {
	return context.WithValue(ctx, auditKey{}, &a)
}

// AuditContextFrom returns the actor WithAuditContext put in ctx.
func AuditContextFrom(ctx context.Context) (AuditContext, bool) {
	a, ok := ctx.Value(auditKey{}).(*AuditContext)
	if !ok {
		return AuditContext{}, false
	}
	return *a, true
}

// setting is the actor as the JSON the triggers read. What the client chose (its user
// agent) is made valid UTF-8 without NUL, which jsonb refuses, and an address that does not
// parse is dropped, since the trigger casts it to inet: nothing a client sends can make the
// change fail.
func (a AuditContext) setting() (string, error) {
	ua := strings.ReplaceAll(strings.ToValidUTF8(a.UserAgent, "\uFFFD"), "\x00", "")
	if len(ua) > MaxAuditUserAgent {
		ua = ua[:MaxAuditUserAgent]
		for !utf8.ValidString(ua) {
			ua = ua[:len(ua)-1]
		}
	}
	a.UserAgent = ua
	if ip, err := netip.ParseAddr(a.IP); err == nil {
		a.IP = ip.Unmap().WithZone("").String()
	} else if p, err := netip.ParsePrefix(a.IP); err == nil {
		a.IP = p.Masked().String()
	} else {
		a.IP = ""
	}
	b, err := json.Marshal(a)
	return string(b), err
}

// setAuditSQL makes the actor the transaction's: is_local true, so it ends with the
// transaction and a pooled connection never carries it into another.
const setAuditSQL = `SELECT set_config('till.audit', $1, true)`

// auditBegin is what InTx hands the connection that begins its transaction (through the
// context of BeginTx): the actor's setting, and whether the connection sent it with BEGIN
// (cachingConn.BeginTx), which saves the round trip of sending it apart.
type auditBegin struct {
	setting string
	sent    bool
}

type auditBeginKey struct{}

// beginStatement is BEGIN and the setting as one simple query, the way lib/pq begins a
// transaction with default options (BEGIN READ WRITE).
func (b *auditBegin) beginStatement() string {
	return "BEGIN READ WRITE; SELECT set_config('till.audit', " + pq.QuoteLiteral(b.setting) + ", true)"
}

// auditBeginning returns ctx for BeginTx, carrying the actor's setting when ctx has an actor;
// begin is nil when it has none.
func auditBeginning(ctx context.Context) (context.Context, *auditBegin, error) {
	a, ok := AuditContextFrom(ctx)
	if !ok {
		return ctx, nil, nil
	}
	s, err := a.setting()
	if err != nil {
		return ctx, nil, err
	}
	b := &auditBegin{setting: s}
	return context.WithValue(ctx, auditBeginKey{}, b), b, nil
}

// applyAudit sends the actor's setting in tx, unless the connection sent it with BEGIN.
func applyAudit(ctx context.Context, tx *sqlx.Tx, b *auditBegin) error {
	if b == nil || b.sent {
		return nil
	}
	_, err := tx.ExecContext(ctx, setAuditSQL, b.setting)
	return mapErr(err)
}

// AuditAsUser makes the rest of tx's changes the user's. A sign-in proves who its caller is
// only inside the transaction that checks the proof, so the session it starts is recorded
// as the user's own, with the request's address, rather than an anonymous caller's.
func AuditAsUser(ctx context.Context, tx *sqlx.Tx, userID uuid.UUID) error {
	a, _ := AuditContextFrom(ctx)
	a.Kind, a.UserID, a.TokenID = AuditActorKindUser, userID, uuid.Nil
	s, err := a.setting()
	if err != nil {
		return err
	}
	_, err = tx.ExecContext(ctx, setAuditSQL, s)
	return mapErr(err)
}

// AuditEntry is one recorded change (a row of audit_log).
type AuditEntry struct {
	ID             uuid.UUID      `db:"id"`
	CreatedAt      time.Time      `db:"created_at"`
	OrganizationID uuid.UUID      `db:"organization_id"`
	ActorKind      AuditActorKind `db:"actor_kind"`
	UserID         *uuid.UUID     `db:"user_id"`
	TokenID        *uuid.UUID     `db:"token_id"`
	OAuthClientID  *string        `db:"oauth_client_id"`
	CustomerID     *uuid.UUID     `db:"customer_id"`
	MemberID       *uuid.UUID     `db:"member_id"`
	Operation      *string        `db:"operation"`
	API            *string        `db:"api"`
	ObjectType     string         `db:"object_type"`
	ObjectID       uuid.UUID      `db:"object_id"`
	Action         AuditAction    `db:"action"`
	// Changes maps each changed column to [before, after], or to "redacted" for a secret.
	Changes   RawJSON `db:"changes"`
	IP        *string `db:"ip"`
	UserAgent *string `db:"user_agent"`
	RequestID *string `db:"request_id"`
}

// AuditChange is one changed field of an AuditEntry.
type AuditChange struct {
	Field string
	// Before and After are the field's JSON values; null where the field had none.
	Before, After RawJSON
	// Redacted means the field is a secret: it changed, and its values are not kept.
	Redacted bool
}

// ChangeList decodes Changes, sorted by field.
func (e *AuditEntry) ChangeList() ([]AuditChange, error) {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(e.Changes, &raw); err != nil {
		return nil, err
	}
	out := make([]AuditChange, 0, len(raw))
	for field, v := range raw {
		c := AuditChange{Field: field}
		var pair []json.RawMessage
		if err := json.Unmarshal(v, &pair); err == nil && len(pair) == 2 {
			c.Before, c.After = RawJSON(pair[0]), RawJSON(pair[1])
		} else {
			c.Redacted = true
		}
		out = append(out, c)
	}
	slices.SortFunc(out, func(a, b AuditChange) int { return strings.Compare(a.Field, b.Field) })
	return out, nil
}

const auditColumns = `id, created_at, organization_id, actor_kind, user_id, token_id, oauth_client_id,
	customer_id, member_id, operation, api, object_type, object_id, action, changes, ip,
	user_agent, request_id`

// AuditFilter narrows the audit log; empty fields do not filter, values of a list are
// OR-ed, fields AND-ed. Since and Until bound created_at (Since inclusive, Until exclusive).
type AuditFilter struct {
	// PersonalOf adds the changes this user made outside any organization (the user's
	// sign-ins and personal access tokens) to those of the organizations listed.
	PersonalOf   *uuid.UUID
	ActorKinds   []string
	UserID       *uuid.UUID
	TokenID      *uuid.UUID
	CustomerID   *uuid.UUID
	ObjectTypes  []string
	ObjectID     *uuid.UUID
	Operations   []string
	Actions      []string
	Since, Until *time.Time
}

// ListAuditLog returns one window of the audit log of the given organizations, newest first,
// with the total count.
func ListAuditLog(ctx context.Context, q sqlx.ExtContext, orgs []uuid.UUID, f AuditFilter, w Window) (Paged[*AuditEntry], error) {
	c := orgFilters("organization_id", orgs)
	if f.PersonalOf != nil {
		c.args = append(c.args, *f.PersonalOf)
		c.where[0] = fmt.Sprintf("(%s OR (organization_id IS NULL AND user_id = $%d))", c.where[0], len(c.args))
	}
	anyOf(c, "actor_kind", f.ActorKinds)
	ifSet(c, "user_id = $%d", f.UserID)
	ifSet(c, "token_id = $%d", f.TokenID)
	ifSet(c, "customer_id = $%d", f.CustomerID)
	anyOf(c, "object_type", f.ObjectTypes)
	ifSet(c, "object_id = $%d", f.ObjectID)
	anyOf(c, "operation", f.Operations)
	anyOf(c, "action", f.Actions)
	ifSet(c, "created_at >= $%d", f.Since)
	ifSet(c, "created_at < $%d", f.Until)
	return listWindow[*AuditEntry](ctx, q, listSQL{Columns: auditColumns, From: "audit_log", ID: "id", Where: c.where,
		Args: c.args, Default: []Sort{{Column: "created_at", Desc: true}}}, w)
}

// PurgeAuditLog deletes the records made before before, at most batch of them (the oldest
// first is not promised), so a first purge of a large log holds no lock for long; it
// returns how many it deleted.
func PurgeAuditLog(ctx context.Context, q sqlx.ExecerContext, before time.Time, batch int) (int, error) {
	res, err := q.ExecContext(ctx, `DELETE FROM audit_log WHERE id IN (
		SELECT id FROM audit_log WHERE created_at < $1 LIMIT $2)`, before, batch)
	if err != nil {
		return 0, mapErr(err)
	}
	n, err := res.RowsAffected()
	return int(n), err
}

// Audited runs fn, a write of one statement, where the audit log can name who made it: in a
// transaction carrying the actor of ctx (InTx) when ctx has one, and straight on the pool,
// as the system's, when it has none. A statement run on the pool outside a transaction is
// the system's whatever its context, so every write a request makes goes through InTx or
// this.
func Audited[T any](ctx context.Context, db *sqlx.DB, fn func(q sqlx.ExtContext) (T, error)) (T, error) {
	if _, ok := AuditContextFrom(ctx); !ok {
		return fn(db)
	}
	var out T
	err := InTx(ctx, db, func(tx *sqlx.Tx) error {
		var err error
		out, err = fn(tx)
		return err
	})
	return out, err
}
