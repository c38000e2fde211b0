package resolvers

import (
	"context"
	"crypto/subtle"
	"strings"

	"github.com/jmoiron/sqlx"

	"till/graph/model"
	"till/internal/auth"
	"till/storage"
)

// verifyClientSecret reports whether secret authenticates the confidential client c. The
// hashes are compared in constant time so response timing reveals nothing about the stored
// hash; public clients (no secret) and expired secrets never verify.
func (r *Resolver) verifyClientSecret(c *storage.OAuth2Client, secret string) bool {
	if c == nil || c.ClientSecretHash == nil || secret == "" {
		return false
	}
	if c.ClientSecretExpiresAt != nil && !r.Now().Before(*c.ClientSecretExpiresAt) {
		return false
	}
	got := auth.Hash(r.secret, secret)
	return subtle.ConstantTimeCompare([]byte(got), []byte(*c.ClientSecretHash)) == 1
}

// oauth2ClientOwner is whose clients the caller manages: a user token its user's, an
// organization token its organization's. hasScope lets no other principal through; should
// one arrive anyway it is refused rather than given an owner that matches nothing visibly.
func oauth2ClientOwner(ctx context.Context) (storage.OAuth2ClientOwner, error) {
	p := auth.FromContext(ctx)
	switch p.Kind {
	case auth.KindUser:
		return storage.OAuth2ClientOwner{UserID: &p.UserID}, nil
	case auth.KindOrganization:
		return storage.OAuth2ClientOwner{OrganizationID: &p.OrganizationID}, nil
	}
	return storage.OAuth2ClientOwner{}, Unauthorized()
}

// newClientSecret makes a till_cs_ secret and the hash that is all Till keeps of it.
func (r *Resolver) newClientSecret() (secret, hash string) {
	secret = auth.Generate(auth.PrefixClientSecret)
	return secret, auth.Hash(r.secret, secret)
}

// createOAuth2Client validates and registers a client for the caller, with a secret unless
// it is public. The secret is returned once and stored only as its hash.
func (r *Resolver) createOAuth2Client(ctx context.Context, in model.OAuth2ClientCreateInput) (*model.OAuth2ClientSecretPayload, error) {
	w, err := checkOAuth2ClientCreate(in)
	if err != nil {
		return nil, err
	}
	owner, err := oauth2ClientOwner(ctx)
	if err != nil {
		return nil, err
	}
	w.ClientID = auth.Generate(auth.PrefixClientID)
	var secret *string
	if w.TokenEndpointAuthMethod != authMethodNone {
		s, hash := r.newClientSecret()
		secret, w.SecretHash = &s, &hash
	}
	c, err := storage.Audited(ctx, r.db, func(q sqlx.ExtContext) (*storage.OAuth2Client, error) {
		return storage.CreateOAuth2Client(ctx, q, owner, w)
	})
	if err != nil {
		return nil, err
	}
	return &model.OAuth2ClientSecretPayload{Client: c, ClientSecret: secret}, nil
}

// updateOAuth2Client changes the given fields of one of the caller's clients. Switching
// between public and confidential creates or drops the secret, so the row never holds a
// secret a public client could be tricked into relying on, nor lacks one a confidential
// client needs; a created secret is returned once.
func (r *Resolver) updateOAuth2Client(ctx context.Context, clientID string, in model.OAuth2ClientUpdateInput) (*model.OAuth2ClientSecretPayload, error) {
	u, err := checkOAuth2ClientUpdate(in)
	if err != nil {
		return nil, err
	}
	owner, err := oauth2ClientOwner(ctx)
	if err != nil {
		return nil, err
	}
	var out *model.OAuth2ClientSecretPayload
	err = storage.InTx(ctx, r.db, func(tx *sqlx.Tx) error {
		current, err := storage.GetOAuth2Client(ctx, tx, owner, clientID)
		if err != nil {
			return notFoundOr(err, "")
		}
		var secret *string
		if method, set := u.TokenEndpointAuthMethod.Get(); set {
			switch {
			case method == authMethodNone:
				u.ClientSecretHash = storage.Set[*string](nil)
			case current.ClientSecretHash == nil:
				s, hash := r.newClientSecret()
				secret, u.ClientSecretHash = &s, storage.Set(&hash)
			}
		}
		c, err := storage.UpdateOAuth2Client(ctx, tx, owner, clientID, u)
		if err != nil {
			return notFoundOr(err, "")
		}
		out = &model.OAuth2ClientSecretPayload{Client: c, ClientSecret: secret}
		return nil
	})
	return out, err
}

// rotateOAuth2ClientSecret gives a confidential client a fresh secret, shown once; the old
// one stops authenticating with the same write. A public client has none to rotate.
func (r *Resolver) rotateOAuth2ClientSecret(ctx context.Context, clientID string) (*model.OAuth2ClientSecretPayload, error) {
	owner, err := oauth2ClientOwner(ctx)
	if err != nil {
		return nil, err
	}
	current, err := storage.GetOAuth2Client(ctx, r.db, owner, clientID)
	if err != nil {
		return nil, notFoundOr(err, "")
	}
	if current.ClientSecretHash == nil {
		return nil, BadRequest("A public client (token_endpoint_auth_method none) has no secret to rotate.")
	}
	secret, hash := r.newClientSecret()
	c, err := storage.Audited(ctx, r.db, func(q sqlx.ExtContext) (*storage.OAuth2Client, error) {
		return storage.RotateOAuth2ClientSecret(ctx, q, owner, clientID, hash)
	})
	if err != nil {
		return nil, notFoundOr(err, "")
	}
	return &model.OAuth2ClientSecretPayload{Client: c, ClientSecret: &secret}, nil
}

// deleteOAuth2Client soft-deletes one of the caller's clients; storage revokes its tokens in
// the same statement.
func (r *Resolver) deleteOAuth2Client(ctx context.Context, clientID string) (*storage.OAuth2Client, error) {
	owner, err := oauth2ClientOwner(ctx)
	if err != nil {
		return nil, err
	}
	c, err := storage.Audited(ctx, r.db, func(q sqlx.ExtContext) (*storage.OAuth2Client, error) {
		return storage.DeleteOAuth2Client(ctx, q, owner, clientID)
	})
	return c, notFoundOr(err, "")
}

// oauth2Client reads one of the caller's live clients; anyone else's is not found.
func (r *Resolver) oauth2Client(ctx context.Context, clientID string) (*storage.OAuth2Client, error) {
	owner, err := oauth2ClientOwner(ctx)
	if err != nil {
		return nil, err
	}
	c, err := storage.GetOAuth2Client(ctx, r.db, owner, clientID)
	return c, notFoundOr(err, "")
}

// oauth2ClientsPage lists the caller's live clients, newest first.
func (r *Resolver) oauth2ClientsPage(ctx context.Context, a listArgs) (*model.OAuth2ClientPage, error) {
	if _, err := a.window(); err != nil {
		return nil, err
	}
	owner, err := oauth2ClientOwner(ctx)
	if err != nil {
		return nil, err
	}
	p, w, err := rootWindow(ctx, a, nil, func(_ []storage.Sort, w storage.Window) (storage.Paged[*storage.OAuth2Client], error) {
		return storage.ListOAuth2Clients(ctx, r.db, owner, w)
	})
	if err != nil {
		return nil, err
	}
	return &model.OAuth2ClientPage{Items: p.Items, Pagination: paginationOf(p.Total, w), PageInfo: pageInfo(p, w)}, nil
}

// oauth2ClientScopes splits a stored scope string into its list form.
func oauth2ClientScopes(c *storage.OAuth2Client) []string {
	return strings.Fields(c.Scope)
}

// wireEnums converts stored wire values to a generated enum type; the values are the same
// strings, only the Go type differs.
func wireEnums[E ~string](values []string) []E {
	out := make([]E, len(values))
	for i, v := range values {
		out[i] = E(v)
	}
	return out
}
