package resolvers_test

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"

	"till/resolvers/resolverstest"
)

// TestBenefitPropertiesReadTyped reads each managed type's properties through its typed
// field: the field of the benefit's own type holds them, the others are null.
func TestBenefitPropertiesReadTyped(t *testing.T) {
	t.Parallel()
	s := resolverstest.New(t)
	org := s.NewOrg(t, "benefits:read benefits:write")
	meter := createMeter(t, s, s.NewToken(t, org.ID, "meters:write"), apiCallsInput(nil)).ID
	kept, archived := insertFile(t, s, org.ID), insertFile(t, s, org.ID)
	const typed = `query($id: UUID!) { benefit(id: $id) {
		custom { note } downloadables { files archivedFiles } meterCredit { units rollover meterId } } }`

	for _, tc := range []struct {
		name  string
		input vars
		want  string
	}{
		{"a custom benefit reads its note",
			vars{"type": "custom", "properties": vars{"note": "Thanks!"}},
			`{"custom": {"note": "Thanks!"}, "downloadables": null, "meterCredit": null}`},
		{"a downloadables benefit reads its files and the archived ones in the benefit's order",
			vars{"type": "downloadables", "properties": vars{"files": []uuid.UUID{kept, archived},
				"archived": map[string]bool{archived.String(): true, kept.String(): false}}},
			`{"custom": null, "downloadables": {"files": ["` + kept.String() + `", "` + archived.String() + `"],
				"archivedFiles": ["` + archived.String() + `"]}, "meterCredit": null}`},
		{"a meter credit benefit reads units, rollover and meter",
			vars{"type": "meter_credit", "properties": vars{"units": 100, "rollover": true, "meter_id": meter}},
			`{"custom": null, "downloadables": null, "meterCredit": {"units": 100, "rollover": true, "meterId": "` + meter.String() + `"}}`},
		{"a discord benefit has no typed properties",
			vars{"type": "discord", "properties": vars{"guild_token": "g"}},
			`{"custom": null, "downloadables": null, "meterCredit": null}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.input["description"] = "A benefit"
			b := createBenefit(t, s, org.Token, tc.input)
			var out struct{ Benefit json.RawMessage }
			s.Query(t, org.Token, typed, vars{"id": b.ID}, &out)
			if diff := cmp.Diff(jsonOf(t, tc.want), jsonOf(t, string(out.Benefit))); diff != "" {
				t.Errorf("typed properties (-want +got):\n%s", diff)
			}
		})
	}
}
