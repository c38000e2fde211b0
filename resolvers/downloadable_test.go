package resolvers_test

import (
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"

	"till/resolvers"
)

func TestDownloadablesFollowTheirGrants(t *testing.T) {
	t.Parallel()
	w := newDownloadWorld(t)
	a, b := w.file(t, "a.txt", "hello world"), w.file(t, "b.txt", "bbb")
	archived, deleted := w.file(t, "old.txt", "old"), w.file(t, "deleted.txt", "x")
	ben := w.benefit(t, []uuid.UUID{a, b, archived, deleted}, archived)
	w.s.Exec(t, `UPDATE files SET deleted_at = now() WHERE id = $1`, deleted)
	alice, aliceScope := w.purchase(t, ben.ID)
	aliceToken := w.s.NewCustomerSession(t, w.org.ID, alice.ID)
	added := w.file(t, "new.txt", "new")

	t.Run("granting gives the active, existing files and records them on the grant", func(t *testing.T) {
		if got, want := w.grantProperties(t, ben.ID, alice.ID), filesJSON(a, b); got != want {
			t.Errorf("grant properties = %s, want %s", got, want)
		}
		ds := w.downloadables(t, aliceToken, nil)
		if diff := cmp.Diff(sortedIDs(a, b), fileIDs(ds)); diff != "" {
			t.Fatalf("listed files (-want +got):\n%s", diff)
		}
		for _, d := range ds {
			if d.File.ID != a {
				continue
			}
			if d.BenefitID != ben.ID || d.Benefit.ID != ben.ID || d.File.Name != "a.txt" || d.File.MimeType != "text/plain" ||
				d.File.Size != 11 || d.File.SizeReadable != "11.0 B" || d.File.Version == nil || *d.File.Version != "v1" ||
				!d.File.IsUploaded || d.Downloaded != 0 || d.LastDownloadedAt != nil ||
				!strings.HasPrefix(d.DownloadURL, "https://portal.till.test/downloads/") {
				t.Errorf("downloadable = %+v", d)
			}
			expires, err := time.Parse(time.RFC3339, d.ExpiresAt)
			if err != nil || expires.Before(time.Now().Add(59*time.Minute)) || expires.After(time.Now().Add(61*time.Minute)) {
				t.Errorf("expiresAt = %s, want about an hour from now", d.ExpiresAt)
			}
		}
	})

	t.Run("an archived file stays with its holders but is not granted to new ones", func(t *testing.T) {
		w.setFiles(t, ben.ID, []uuid.UUID{a, b, archived, added}, b, archived)
		if diff := cmp.Diff(sortedIDs(a, b, added), fileIDs(w.downloadables(t, aliceToken, nil))); diff != "" {
			t.Errorf("alice's files after the update (-want +got):\n%s", diff)
		}
		if got, want := w.grantProperties(t, ben.ID, alice.ID), filesJSON(a, b, added); got != want {
			t.Errorf("alice's grant properties = %s, want %s", got, want)
		}
		bob, _ := w.purchase(t, ben.ID)
		if diff := cmp.Diff(sortedIDs(a, added), fileIDs(w.downloadables(t, w.s.NewCustomerSession(t, w.org.ID, bob.ID), nil))); diff != "" {
			t.Errorf("bob's files (-want +got):\n%s", diff)
		}
		if n := w.events(t)["benefit_grant.updated"]; n != 1 {
			t.Errorf("benefit_grant.updated events = %d, want 1 (alice's grant)", n)
		}

		w.setFiles(t, ben.ID, []uuid.UUID{b, added}, b)
		if diff := cmp.Diff(sortedIDs(b, added), fileIDs(w.downloadables(t, aliceToken, nil))); diff != "" {
			t.Errorf("alice's files after a was removed (-want +got):\n%s", diff)
		}
	})

	t.Run("a downloaded file counts, and revoking hides it and its links", func(t *testing.T) {
		var link string
		for _, d := range w.downloadables(t, aliceToken, &ben.ID) {
			if d.File.ID == added {
				link = d.DownloadURL
			}
		}
		if status, body := w.fetch(t, link); status != http.StatusOK || body != "new" {
			t.Fatalf("download = %d %q, want 200 with the file's bytes", status, body)
		}
		w.revoke(t, aliceScope)
		if ds := w.downloadables(t, aliceToken, nil); len(ds) != 0 {
			t.Errorf("revoked customer lists %d downloadables", len(ds))
		}
		if status, _ := w.fetch(t, link); status != http.StatusNotFound {
			t.Errorf("download after revoke = %d, want 404", status)
		}
		w.grant(t, aliceScope)
		ds := w.downloadables(t, aliceToken, nil)
		if diff := cmp.Diff(sortedIDs(added), fileIDs(ds)); diff != "" {
			t.Fatalf("granted again, alice lists (-want +got), the archived b not returning:\n%s", diff)
		}
		if ds[0].Downloaded != 1 || ds[0].LastDownloadedAt == nil {
			t.Errorf("granted again: %+v, want the earlier download kept", ds[0])
		}
	})

	t.Run("a deleted file is not listed and its link is gone", func(t *testing.T) {
		link := w.downloadables(t, aliceToken, nil)[0].DownloadURL
		w.s.Exec(t, `UPDATE files SET deleted_at = now() WHERE id = $1`, added)
		if ds := w.downloadables(t, aliceToken, nil); len(ds) != 0 {
			t.Errorf("alice lists %d downloadables after the file was deleted", len(ds))
		}
		if status, _ := w.fetch(t, link); status != http.StatusGone {
			t.Errorf("download of a deleted file = %d, want 410", status)
		}
	})
}

func TestDownloadablesOfMembers(t *testing.T) {
	t.Parallel()
	w := newDownloadWorld(t)
	f := w.file(t, "team.txt", "team")
	ben := w.benefit(t, []uuid.UUID{f})
	team := w.s.NewCustomer(t, w.org.ID, "")
	p := w.s.NewProduct(t, w.org.ID, "Team files", ben.ID)
	orderID := w.s.NewPaidOrder(t, w.org.ID, team.ID, p.ID, nil)
	members := make([]uuid.UUID, 2)
	for i := range members {
		w.s.Get(t, &members[i], `INSERT INTO members (organization_id, customer_id, email) VALUES ($1, $2, $3) RETURNING id`,
			w.org.ID, team.ID, uuid.NewString()[:8]+"@example.com")
		w.grant(t, resolvers.GrantScope{CustomerID: team.ID, ProductID: p.ID, OrderID: &orderID, MemberID: &members[i]})
	}
	customerWide := w.downloadables(t, w.s.NewCustomerSession(t, w.org.ID, team.ID), nil)
	if len(customerWide) != 2 {
		t.Fatalf("the customer lists %d downloadables, want its two members'", len(customerWide))
	}
	for i, m := range members {
		t.Run(fmt.Sprintf("member %d sees only its own downloadable", i), func(t *testing.T) {
			ds := w.downloadables(t, w.s.NewMemberSession(t, w.org.ID, team.ID, m), nil)
			var own uuid.UUID
			w.s.Get(t, &own, `SELECT id FROM downloadables WHERE member_id = $1`, m)
			if len(ds) != 1 || ds[0].ID != own {
				t.Errorf("member lists %+v, want only %s", ds, own)
			}
		})
	}
}

func TestDownloadLinks(t *testing.T) {
	t.Parallel()
	w := newDownloadWorld(t)
	f := w.file(t, "app.zip", "0123456789")
	ben := w.benefit(t, []uuid.UUID{f})
	c, _ := w.purchase(t, ben.ID)
	token := w.s.NewCustomerSession(t, w.org.ID, c.ID)
	link := w.downloadables(t, token, nil)[0].DownloadURL

	t.Run("concurrent downloads all return the bytes and all count", func(t *testing.T) {
		const n = 25
		var wg sync.WaitGroup
		errs := make(chan string, n)
		for range n {
			wg.Go(func() {
				if status, body := w.fetch(t, link); status != http.StatusOK || body != "0123456789" {
					errs <- http.StatusText(status) + " " + body
				}
			})
		}
		wg.Wait()
		close(errs)
		for e := range errs {
			t.Errorf("download failed: %s", e)
		}
		d := w.downloadables(t, token, nil)[0]
		if d.Downloaded != n || d.LastDownloadedAt == nil {
			t.Errorf("downloaded = %d (last %v), want %d", d.Downloaded, d.LastDownloadedAt, n)
		}
	})

	i := strings.LastIndex(link, "/") + 1
	flip := func(c byte) string {
		if c == 'A' {
			return "B"
		}
		return "A"
	}
	tests := []struct {
		name string
		link string
		want int
	}{
		{"a tampered token is refused", link[:len(link)-1] + flip(link[len(link)-1]), http.StatusForbidden},
		{"a token with another downloadable's id is refused", link[:i+3] + flip(link[i+3]) + link[i+4:], http.StatusForbidden},
		{"garbage is refused", link[:i] + "not-a-token", http.StatusForbidden},
		{"an unknown path is refused", link[:i], http.StatusForbidden},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if status, _ := w.fetch(t, tt.link); status != tt.want {
				t.Errorf("status = %d, want %d", status, tt.want)
			}
		})
	}

	t.Run("only GET downloads", func(t *testing.T) {
		res, err := w.srv.Client().Post(w.srv.URL+strings.TrimPrefix(link, "https://portal.till.test"), "text/plain", nil)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != http.StatusMethodNotAllowed {
			t.Errorf("POST = %d, want 405", res.StatusCode)
		}
	})

	t.Run("an expired link is refused and counts nothing", func(t *testing.T) {
		before := w.downloadables(t, token, nil)[0].Downloaded
		w.s.Clock.Set(time.Now().Add(time.Hour + time.Minute))
		if status, _ := w.fetch(t, link); status != http.StatusForbidden {
			t.Errorf("status = %d, want 403", status)
		}
		w.s.Clock.Reset()
		if after := w.downloadables(t, token, nil)[0].Downloaded; after != before {
			t.Errorf("downloaded went from %d to %d", before, after)
		}
	})
}

func TestFileSizesReadAsUpstreamPrintsThem(t *testing.T) {
	t.Parallel()
	w := newDownloadWorld(t)
	tests := []struct {
		size int64
		want string
	}{
		{0, "0.0 B"},
		{512, "512.0 B"},
		{1023, "1023.0 B"},
		{1024, "1.0 KB"},
		{1536, "1.5 KB"},
		{10 * 1024 * 1024, "10.0 MB"},
		{5 * 1024 * 1024 * 1024, "5.0 GB"},
		{3 << 40, "3.0 TB"},
	}
	files := make([]uuid.UUID, len(tests))
	for i, tt := range tests {
		files[i] = w.file(t, "f.bin", "")
		w.s.Exec(t, `UPDATE files SET size = $2 WHERE id = $1`, files[i], tt.size)
	}
	ben := w.benefit(t, files)
	c, _ := w.purchase(t, ben.ID)
	got := map[int64]string{}
	for _, d := range w.downloadables(t, w.s.NewCustomerSession(t, w.org.ID, c.ID), nil) {
		got[d.File.Size] = d.File.SizeReadable
	}
	for _, tt := range tests {
		if got[tt.size] != tt.want {
			t.Errorf("sizeReadable(%d) = %q, want %q", tt.size, got[tt.size], tt.want)
		}
	}
}
