package resolvers

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"
	"github.com/jmoiron/sqlx"

	"till/internal/auth"
	"till/internal/ratelimit"
	"till/storage"
)

const (
	// userSessionLifetime is how long a browser session works: a fixed time from signing
	// in, not extended by use, so a stolen cookie works a bounded time whatever its thief
	// does, and a person signs in again once a month.
	userSessionLifetime = 30 * 24 * time.Hour
	// MaxUserSessions is how many live sessions a user keeps; signing in past it ends the
	// oldest. It bounds the list the schema declares with @listSize.
	MaxUserSessions = 50
	// MaxViewerOrganizations is how many memberships Viewer.organizations lists.
	MaxViewerOrganizations = 100
	// maxUserAgent is how much of a browser's User-Agent a session keeps, in characters.
	maxUserAgent = 512
	// maxReturnTo is the longest return path a sign-in keeps.
	maxReturnTo = 2048
	// DefaultReturnTo is where a sign-in leads without a usable return path: the sign-in
	// page, which then says who is signed in.
	DefaultReturnTo = "/login"
	// sessionPurgeAge is how long revoked and expired sessions and spent codes are kept.
	sessionPurgeAge = 24 * time.Hour
)

// SignInClient is the browser signing in, as its sessions list shows it.
type SignInClient struct {
	// UserAgent is the request's User-Agent header.
	UserAgent string
}

// SignedIn is a new browser session: the cookie's token (shown only now), the CSRF token
// the session's pages send, and where the sign-in leads.
type SignedIn struct {
	User      *storage.User
	Session   *storage.UserSession
	Token     string
	CSRFToken string
	// ReturnTo is the return path the code's request named; empty when none was taken.
	ReturnTo string
}

// startSession makes the user with email (creating them, verified, when there is none) and
// a new browser session of theirs, in tx, the transaction that used up the proof.
func (r *Resolver) startSession(ctx context.Context, tx *sqlx.Tx, email string, client SignInClient) (*SignedIn, error) {
	u, err := storage.EnsureVerifiedUser(ctx, tx, email)
	if err != nil {
		return nil, err
	}
	if err := storage.AuditAsUser(ctx, tx, u.ID); err != nil {
		return nil, err
	}
	token := auth.Generate(auth.PrefixUserSession)
	w := storage.UserSessionWrite{UserID: u.ID, Hash: auth.Hash(r.secret, token), ExpiresAt: r.Now().Add(userSessionLifetime),
		UserAgent: cleanUserAgent(client.UserAgent)}
	if ip, ok := ratelimit.ClientIPFrom(ctx); ok && ip != "" && utf8.ValidString(ip) && !strings.ContainsRune(ip, 0) {
		w.IP = &ip
	}
	s, err := storage.CreateUserSession(ctx, tx, w, MaxUserSessions)
	if err != nil {
		return nil, err
	}
	return &SignedIn{User: u, Session: s, Token: token, CSRFToken: auth.CSRFToken(r.secret, s.ID)}, nil
}

// cleanUserAgent keeps what PostgreSQL can store of a header, at most maxUserAgent
// characters.
func cleanUserAgent(ua string) string {
	ua = strings.ReplaceAll(strings.ToValidUTF8(ua, "\uFFFD"), "\x00", "")
	if utf8.RuneCountInString(ua) > maxUserAgent {
		ua = string([]rune(ua)[:maxUserAgent])
	}
	return ua
}

// resolveUserSession resolves a browser session's token hash into its user's principal:
// first party, with every scope a user may hold, over the user's organizations.
func (r *Resolver) resolveUserSession(ctx context.Context, hash string) (auth.Principal, error) {
	t, err := storage.ResolveUserSession(ctx, r.db, hash)
	if errors.Is(err, storage.ErrNotFound) {
		return auth.Principal{}, auth.ErrInvalidToken
	}
	if err != nil {
		return auth.Principal{}, err
	}
	if t.LastUsedAt == nil || r.Now().Sub(*t.LastUsedAt) >= tokenUseResolution {
		if err := storage.TouchUserSession(ctx, r.db, t.ID); err != nil {
			slog.WarnContext(ctx, "recording a browser session's use failed", "session_id", t.ID, "error", err)
		}
	}
	return auth.Principal{Kind: auth.KindUser, TokenID: t.ID, UserID: t.UserID, Organizations: t.Organizations,
		Roles: rolesOf(t.Roles), Scopes: auth.NewScopeSet(auth.AllScopes()...), ExpiresAt: t.ExpiresAt,
		BrowserSession: true}, nil
}

// Browser is how the sign-in endpoints and the middleware treat browsers: which pages are
// trusted and how the session cookie is set.
func (r *Resolver) Browser() auth.Browser { return r.browser }

// BrowserSession resolves the session cookie of req: its user's principal, or false when
// req carries no live session.
func (r *Resolver) BrowserSession(req *http.Request) (auth.Principal, bool, error) {
	token, ok := auth.SessionToken(req)
	if !ok {
		return auth.Principal{}, false, nil
	}
	p, err := r.ResolveToken(req.Context(), auth.TokenUserSession, auth.Hash(r.secret, token))
	if errors.Is(err, auth.ErrInvalidToken) {
		return auth.Principal{}, false, nil
	}
	return p, err == nil, err
}

// SignOutBrowser ends the session of req's cookie once req proved it comes from a trusted
// page with the session's CSRF token (csrf, from a header or a form). Without a live
// session there is nothing to end, and that is no failure.
func (r *Resolver) SignOutBrowser(req *http.Request, csrf string) error {
	p, ok, err := r.BrowserSession(req)
	if err != nil || !ok {
		return err
	}
	if err := r.browser.VerifyCSRF(req, r.secret, p.TokenID, csrf); err != nil {
		return &Error{Code: CodeNotPermitted, Detail: auth.CSRFRefusal}
	}
	_, err = r.revokeUserSession(auditAs(req.Context(), p), p.UserID, p.TokenID)
	if errors.Is(err, storage.ErrNotFound) {
		return nil
	}
	return err
}

// revokeUserSession revokes one of the user's sessions; once it has committed this process
// forgets the credentials it keeps, and the change notification does the same elsewhere.
func (r *Resolver) revokeUserSession(ctx context.Context, userID, id uuid.UUID) (*storage.UserSession, error) {
	s, err := storage.Audited(ctx, r.db, func(q sqlx.ExtContext) (*storage.UserSession, error) {
		return storage.RevokeUserSession(ctx, q, userID, id)
	})
	if err != nil {
		return nil, err
	}
	auth.TokensChanged(ctx)
	return s, nil
}

// userSessions lists the calling user's live sessions.
func (r *Resolver) userSessions(ctx context.Context) ([]*storage.UserSession, error) {
	return storage.ListUserSessions(ctx, r.db, auth.FromContext(ctx).UserID, MaxUserSessions)
}

// revokeUserSessionByID revokes one of the calling user's sessions.
func (r *Resolver) revokeUserSessionByID(ctx context.Context, id uuid.UUID) (*storage.UserSession, error) {
	s, err := r.revokeUserSession(ctx, auth.FromContext(ctx).UserID, id)
	return s, notFoundOr(err, "User session not found.")
}

// signOut ends the browser session the request was made with.
func (r *Resolver) signOut(ctx context.Context) (*bool, error) {
	p := auth.FromContext(ctx)
	if !p.BrowserSession {
		return nil, BadRequest("Signing out ends a browser session; this request was made with a token.")
	}
	_, err := r.revokeUserSession(ctx, p.UserID, p.TokenID)
	return succeeded(notFoundOr(err, "User session not found."))
}

// isCurrentSession reports whether s is the session of the request.
func isCurrentSession(ctx context.Context, s *storage.UserSession) bool {
	p := auth.FromContext(ctx)
	return p.BrowserSession && p.TokenID == s.ID
}

// viewer is the calling user.
func (r *Resolver) viewer(ctx context.Context) (*storage.User, error) {
	u, err := storage.GetUser(ctx, r.db, auth.FromContext(ctx).UserID)
	return u, notFoundOr(err, "User not found.")
}

// viewerOrganizations lists the user's memberships.
func (r *Resolver) viewerOrganizations(ctx context.Context, u *storage.User) ([]*storage.UserMembership, error) {
	return storage.ListMemberships(ctx, r.db, u.ID, MaxViewerOrganizations)
}

// CSRFToken is the CSRF token of the browser session p, for pages Till renders itself.
func (r *Resolver) CSRFToken(p auth.Principal) string { return auth.CSRFToken(r.secret, p.TokenID) }

// UserEmail is the email of the live user id, for the pages that say who is signed in.
func (r *Resolver) UserEmail(ctx context.Context, id uuid.UUID) (string, error) {
	u, err := storage.GetUser(ctx, r.db, id)
	if err != nil {
		return "", notFoundOr(err, "User not found.")
	}
	return u.Email, nil
}

// viewerCSRFToken is the CSRF token of the request's browser session, if it has one.
func (r *Resolver) viewerCSRFToken(ctx context.Context) *string {
	p := auth.FromContext(ctx)
	if !p.BrowserSession {
		return nil
	}
	return ptrTo(auth.CSRFToken(r.secret, p.TokenID))
}

// PurgeSignIns deletes sessions and sign-in codes that stopped working a day ago.
func (r *Resolver) PurgeSignIns(ctx context.Context) (int, error) {
	cutoff := r.Now().Add(-sessionPurgeAge)
	n, err := storage.PurgeUserSessions(ctx, r.db, cutoff)
	if err != nil {
		return n, err
	}
	m, err := storage.PurgeLoginCodes(ctx, r.db, cutoff)
	return n + m, err
}

// SafeReturnTo keeps a return path only when it leads within Till's own origin: an absolute
// path with no scheme, host, backslash or control character (so neither //evil.example nor
// /\evil.example, which browsers read as another host, gets through). Anything else is
// DefaultReturnTo.
func SafeReturnTo(s string) string {
	if s == "" || len(s) > maxReturnTo || !strings.HasPrefix(s, "/") || strings.HasPrefix(s, "//") ||
		strings.ContainsAny(s, "\\") || !utf8.ValidString(s) {
		return DefaultReturnTo
	}
	for _, c := range s {
		if c < 0x20 || c == 0x7f {
			return DefaultReturnTo
		}
	}
	u, err := url.Parse(s)
	if err != nil || u.Scheme != "" || u.Host != "" || u.User != nil {
		return DefaultReturnTo
	}
	return s
}
