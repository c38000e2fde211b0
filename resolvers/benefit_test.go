package resolvers_test

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/google/uuid"

	"till/resolvers/resolverstest"
)

const (
	createBenefitDoc = `mutation($input: BenefitCreateInput!) { createBenefit(input: $input) { ` + benefitFields + ` } }`
	updateBenefitDoc = `mutation($input: BenefitUpdateInput!) { updateBenefit(input: $input) { ` + benefitFields + ` } }`
	deleteBenefitDoc = `mutation($id: UUID!) { deleteBenefit(id: $id) { ` + benefitFields + ` } }`
	getBenefitDoc    = `query($id: UUID!) { benefit(id: $id) { ` + benefitFields + ` } }`
)

func TestCreateBenefit(t *testing.T) {
	t.Parallel()
	s := resolverstest.New(t)
	org := s.NewOrg(t, "benefits:read benefits:write")
	meter := createMeter(t, s, s.NewToken(t, org.ID, "meters:write"), apiCallsInput(nil)).ID
	file := insertFile(t, s, org.ID)

	for _, tc := range []struct {
		name  string
		input vars
		props string
		keys  *licenseKeys
	}{
		{"a custom benefit keeps its note",
			vars{"type": "custom", "properties": vars{"note": "Thanks!"}}, `{"note": "Thanks!"}`, nil},
		{"a custom benefit without properties gets a null note",
			vars{"type": "custom"}, `{"note": null}`, nil},
		{"a discord benefit keeps its properties",
			vars{"type": "discord", "properties": vars{"guild_token": "g", "role_id": "r"}}, `{"guild_token": "g", "role_id": "r"}`, nil},
		{"a github benefit keeps its properties",
			vars{"type": "github_repository", "properties": vars{"repository_owner": "o", "repository_name": "n", "permission": "pull"}},
			`{"repository_owner": "o", "repository_name": "n", "permission": "pull"}`, nil},
		{"a downloadables benefit gets an archived map",
			vars{"type": "downloadables", "properties": vars{"files": []uuid.UUID{file}}}, `{"archived": {}, "files": ["` + file.String() + `"]}`, nil},
		{"a downloadables benefit keeps archived marks of its own files only",
			vars{"type": "downloadables", "properties": vars{"files": []uuid.UUID{file},
				"archived": map[string]bool{file.String(): true, uuid.NewString(): true}}},
			`{"archived": {"` + file.String() + `": true}, "files": ["` + file.String() + `"]}`, nil},
		{"a meter credit benefit keeps units, rollover and meter",
			vars{"type": "meter_credit", "properties": vars{"units": 100, "rollover": true, "meter_id": meter}},
			`{"units": 100, "rollover": true, "meter_id": "` + meter.String() + `"}`, nil},
		{"a feature flag benefit keeps its properties",
			vars{"type": "feature_flag", "properties": vars{}}, `{}`, nil},
		{"a slack benefit keeps its properties",
			vars{"type": "slack_shared_channel", "properties": vars{"channel": "c"}}, `{"channel": "c"}`, nil},
		{"a license key benefit with every property is typed",
			vars{"type": "license_keys", "properties": vars{"prefix": "MYAPP", "expires": vars{"ttl": 1, "timeframe": "year"},
				"activations": vars{"limit": 5, "enable_customer_admin": true}, "limit_usage": 1000}},
			`{"prefix": "MYAPP", "expires": {"ttl": 1, "timeframe": "year"}, "activations": {"limit": 5, "enable_customer_admin": true}, "limit_usage": 1000}`,
			&licenseKeys{Prefix: ptr("MYAPP"), Expires: &struct {
				TTL       int    `json:"ttl"`
				Timeframe string `json:"timeframe"`
			}{1, "year"}, Activations: &struct {
				Limit               int  `json:"limit"`
				EnableCustomerAdmin bool `json:"enableCustomerAdmin"`
			}{5, true}, LimitUsage: ptr(1000)}},
		{"a license key benefit without properties has every key null",
			vars{"type": "license_keys"}, `{"prefix": null, "expires": null, "activations": null, "limit_usage": null}`, &licenseKeys{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.input["description"] = "A benefit"
			got := createBenefit(t, s, org.Token, tc.input)
			if diff := cmp.Diff(jsonOf(t, tc.props), any(got.Properties)); diff != "" {
				t.Errorf("properties (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.keys, got.LicenseKeys); diff != "" {
				t.Errorf("licenseKeys (-want +got):\n%s", diff)
			}
			want := benefit{Type: tc.input["type"].(string), Description: "A benefit", Selectable: true, Deletable: true,
				OrganizationID: org.ID, Metadata: map[string]any{}, Visibility: "public",
				VisibilityConfigurable: tc.input["type"] != "meter_credit"}
			if diff := cmp.Diff(want, got, cmpopts.IgnoreFields(benefit{}, "ID", "Properties", "LicenseKeys")); diff != "" {
				t.Errorf("benefit (-want +got):\n%s", diff)
			}
		})
	}

	t.Run("visibility and metadata are stored", func(t *testing.T) {
		got := createBenefit(t, s, org.Token, vars{"type": "custom", "description": "Hidden", "visibility": "private",
			"metadata": vars{"k": "v"}})
		if got.Visibility != "private" || !cmp.Equal(got.Metadata, map[string]any{"k": "v"}) {
			t.Errorf("benefit = %+v", got)
		}
	})

	t.Run("descriptions of 3 and 42 characters are accepted, counted in characters", func(t *testing.T) {
		createBenefit(t, s, org.Token, vars{"type": "custom", "description": "abc"})
		createBenefit(t, s, org.Token, vars{"type": "custom", "description": strings.Repeat("é", 42)})
	})

	lk := func(props vars) vars { return vars{"type": "license_keys", "description": "Keys", "properties": props} }
	for _, tc := range []struct {
		name  string
		input vars
		loc   []any
		typ   string
		msg   string
	}{
		{"a description under 3 characters is rejected", vars{"type": "custom", "description": "ab"},
			[]any{"input", "description"}, "string_too_short", "String should have at least 3 characters"},
		{"a description over 42 characters is rejected", vars{"type": "custom", "description": strings.Repeat("x", 43)},
			[]any{"input", "description"}, "string_too_long", "String should have at most 42 characters"},
		{"a license key prefix over 32 characters is rejected", lk(vars{"prefix": strings.Repeat("P", 33)}),
			[]any{"input", "properties", "prefix"}, "value_error", "String should have at most 32 characters"},
		{"a license key expiry without ttl is rejected", lk(vars{"expires": vars{"timeframe": "month"}}),
			[]any{"input", "properties", "expires"}, "value_error", "Expiration needs a positive ttl and a timeframe of year, month or day."},
		{"a license key expiry in weeks is rejected", lk(vars{"expires": vars{"ttl": 2, "timeframe": "week"}}),
			[]any{"input", "properties", "expires"}, "value_error", "Expiration needs a positive ttl and a timeframe of year, month or day."},
		{"an activation limit of 0 is rejected", lk(vars{"activations": vars{"limit": 0}}),
			[]any{"input", "properties", "activations", "limit"}, "value_error", "Activation limit must be between 1 and 50."},
		{"an activation limit over 50 is rejected", lk(vars{"activations": vars{"limit": 51, "enable_customer_admin": false}}),
			[]any{"input", "properties", "activations", "limit"}, "value_error", "Activation limit must be between 1 and 50."},
		{"a usage limit of 0 is rejected", lk(vars{"limit_usage": 0}),
			[]any{"input", "properties", "limit_usage"}, "value_error", "Input should be greater than 0"},
		{"downloadables without files are rejected", vars{"type": "downloadables", "description": "Files", "properties": vars{"files": []string{}}},
			[]any{"input", "properties", "files"}, "value_error", "At least one file is required."},
		{"meter credits without a meter are rejected", vars{"type": "meter_credit", "description": "Credits", "properties": vars{"units": 10}},
			[]any{"input", "properties"}, "value_error", "Meter credit needs positive units and a meter_id."},
		{"meter credits with no units are rejected", vars{"type": "meter_credit", "description": "Credits", "properties": vars{"units": 0, "meter_id": meter}},
			[]any{"input", "properties"}, "value_error", "Meter credit needs positive units and a meter_id."},
		{"meter credits on an unknown meter are rejected", vars{"type": "meter_credit", "description": "Credits",
			"properties": vars{"units": 10, "meter_id": uuid.New()}},
			[]any{"input", "properties", "meter_id"}, "value_error", "This meter does not exist."},
		{"downloadables of an unknown file are rejected at that file", vars{"type": "downloadables", "description": "Files",
			"properties": vars{"files": []uuid.UUID{file, uuid.New()}}},
			[]any{"input", "properties", "files", 1}, "value_error", "File not found."},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := s.QueryError(t, org.Token, createBenefitDoc, vars{"input": tc.input})
			want := fieldErr{Type: tc.typ, Loc: tc.loc, Msg: tc.msg}
			if len(got.Extensions.Fields) == 1 { // the input echoed back is not under test here
				want.Input = got.Extensions.Fields[0].Input
			}
			wantInvalid(t, got, want)
		})
	}

	for name, input := range map[string]vars{
		"a license key prefix that is not a string is rejected": lk(vars{"prefix": 5}),
		"properties that are not an object are rejected":        {"type": "discord", "description": "Discord", "properties": "guild"},
	} {
		t.Run(name, func(t *testing.T) {
			got := s.QueryError(t, org.Token, createBenefitDoc, vars{"input": input})
			if (got.Extensions.Code != "BAD_USER_INPUT" || got.Extensions.Reason != "PolarRequestValidationError") || len(got.Extensions.Fields) != 1 ||
				!cmp.Equal(got.Extensions.Fields[0].Loc, []any{"input", "properties"}) {
				t.Errorf("error = %+v", got)
			}
		})
	}

	t.Run("no benefit is left by the rejected ones", func(t *testing.T) {
		var n int
		if err := s.DB.Get(&n, `SELECT count(*) FROM benefits WHERE description IN ('Keys', 'Files', 'Credits', 'Discord', 'ab')`); err != nil || n != 0 {
			t.Errorf("rejected benefits stored: %d, %v", n, err)
		}
	})
}

func TestUpdateBenefit(t *testing.T) {
	t.Parallel()
	s := resolverstest.New(t)
	org := s.NewOrg(t, "benefits:read benefits:write")
	keys := func(t *testing.T) benefit {
		t.Helper()
		return createBenefit(t, s, org.Token, vars{"type": "license_keys", "description": "Keys",
			"properties": vars{"prefix": "OLD", "limit_usage": 10}, "metadata": vars{"a": "1"}})
	}
	update := func(t *testing.T, input vars) benefit {
		t.Helper()
		var out struct{ UpdateBenefit benefit }
		s.Query(t, org.Token, updateBenefitDoc, vars{"input": input}, &out)
		return out.UpdateBenefit
	}

	t.Run("absent fields are left alone", func(t *testing.T) {
		b := keys(t)
		if diff := cmp.Diff(b, update(t, vars{"id": b.ID})); diff != "" {
			t.Errorf("benefit changed by an empty update (-before +after):\n%s", diff)
		}
	})

	t.Run("given fields are replaced and properties re-validated for the type", func(t *testing.T) {
		b := keys(t)
		got := update(t, vars{"id": b.ID, "description": "New keys", "visibility": "private", "metadata": vars{"b": 2},
			"properties": vars{"prefix": "NEW", "activations": vars{"limit": 3, "enable_customer_admin": false}}})
		want := b
		want.Description, want.Visibility, want.Metadata = "New keys", "private", map[string]any{"b": float64(2)}
		want.Properties = map[string]any{"prefix": "NEW", "expires": nil, "activations": map[string]any{"limit": float64(3), "enable_customer_admin": false}, "limit_usage": nil}
		want.LicenseKeys = &licenseKeys{Prefix: ptr("NEW"), Activations: &struct {
			Limit               int  `json:"limit"`
			EnableCustomerAdmin bool `json:"enableCustomerAdmin"`
		}{3, false}}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("benefit (-want +got):\n%s", diff)
		}
	})

	t.Run("a null description is ignored", func(t *testing.T) {
		b := keys(t)
		if got := update(t, vars{"id": b.ID, "description": nil}); got.Description != b.Description {
			t.Errorf("description = %q, want %q", got.Description, b.Description)
		}
	})

	t.Run("invalid properties are rejected", func(t *testing.T) {
		b := keys(t)
		got := s.QueryError(t, org.Token, updateBenefitDoc, vars{"input": vars{"id": b.ID, "properties": vars{"limit_usage": -1}}})
		wantInvalid(t, got, fieldErr{Type: "value_error", Loc: []any{"input", "properties", "limit_usage"},
			Msg: "Input should be greater than 0", Input: map[string]any{"limit_usage": float64(-1)}})
	})

	t.Run("a long description is rejected", func(t *testing.T) {
		b := keys(t)
		got := s.QueryError(t, org.Token, updateBenefitDoc, vars{"input": vars{"id": b.ID, "description": strings.Repeat("d", 43)}})
		wantInvalid(t, got, fieldErr{Type: "string_too_long", Loc: []any{"input", "description"},
			Msg: "String should have at most 42 characters", Input: strings.Repeat("d", 43)})
	})

	t.Run("an unknown benefit is ResourceNotFound", func(t *testing.T) {
		wantError(t, s.QueryError(t, org.Token, updateBenefitDoc, vars{"input": vars{"id": uuid.New(), "description": "Nope"}}),
			"NOT_FOUND", "ResourceNotFound")
	})
}

func TestDeleteBenefit(t *testing.T) {
	t.Parallel()
	s := resolverstest.New(t)
	org := s.NewOrg(t, resolverstest.AllScopes)
	gone, stays := newBenefit(t, s, org.Token, "Gone"), newBenefit(t, s, org.Token, "Stays")
	p := s.NewProduct(t, org.ID, "Bundle", gone.ID, stays.ID)

	var out struct{ DeleteBenefit benefit }
	s.Query(t, org.Token, deleteBenefitDoc, vars{"id": gone.ID}, &out)

	t.Run("the deleted benefit is returned marked deleted", func(t *testing.T) {
		if out.DeleteBenefit.ID != gone.ID || !out.DeleteBenefit.IsDeleted {
			t.Errorf("deleted = %+v", out.DeleteBenefit)
		}
	})
	t.Run("the row is kept (soft delete)", func(t *testing.T) {
		var n int
		if err := s.DB.Get(&n, `SELECT count(*) FROM benefits WHERE id = $1 AND deleted_at IS NOT NULL`, gone.ID); err != nil || n != 1 {
			t.Errorf("soft-deleted rows = %d, %v", n, err)
		}
	})
	t.Run("it is detached from its products", func(t *testing.T) {
		var got struct{ Product product }
		s.Query(t, org.Token, getProductDoc, vars{"id": p.ID}, &got)
		if diff := cmp.Diff([]uuid.UUID{stays.ID}, got.Product.BenefitIDs()); diff != "" {
			t.Errorf("product benefits (-want +got):\n%s", diff)
		}
		var n int
		if err := s.DB.Get(&n, `SELECT count(*) FROM product_benefits WHERE benefit_id = $1`, gone.ID); err != nil || n != 0 {
			t.Errorf("product_benefits rows left = %d, %v", n, err)
		}
	})
	for name, tc := range map[string]struct {
		doc  string
		vars vars
	}{
		"get is then ResourceNotFound":        {getBenefitDoc, vars{"id": gone.ID}},
		"update is then ResourceNotFound":     {updateBenefitDoc, vars{"input": vars{"id": gone.ID, "description": "Back"}}},
		"a second delete is ResourceNotFound": {deleteBenefitDoc, vars{"id": gone.ID}},
	} {
		t.Run(name, func(t *testing.T) {
			wantError(t, s.QueryError(t, org.Token, tc.doc, tc.vars), "NOT_FOUND", "ResourceNotFound")
		})
	}
	t.Run("the list no longer shows it", func(t *testing.T) {
		var list struct {
			Benefits struct{ Items []struct{ ID uuid.UUID } }
		}
		s.Query(t, org.Token, `{ benefits { items { id } } }`, nil, &list)
		if len(list.Benefits.Items) != 1 || list.Benefits.Items[0].ID != stays.ID {
			t.Errorf("benefits = %+v", list.Benefits.Items)
		}
	})
	t.Run("a benefit that is not deletable is NotPermitted", func(t *testing.T) {
		fixed := newBenefit(t, s, org.Token, "Fixed")
		s.Exec(t, `UPDATE benefits SET deletable = false WHERE id = $1`, fixed.ID)
		got := s.QueryError(t, org.Token, deleteBenefitDoc, vars{"id": fixed.ID})
		wantError(t, got, "FORBIDDEN", "NotPermitted")
		if got.Message != "This benefit cannot be deleted." {
			t.Errorf("message = %q", got.Message)
		}
	})
}

func TestListBenefits(t *testing.T) {
	t.Parallel()
	s := resolverstest.New(t)
	org := s.NewOrg(t, "benefits:read benefits:write")
	for i, in := range []vars{
		{"type": "custom", "description": "Bravo custom", "metadata": vars{"tier": "1"}},
		{"type": "license_keys", "description": "Alpha keys"},
		{"type": "discord", "description": "Charlie discord", "properties": vars{}, "metadata": vars{"tier": "2"}},
		{"type": "license_keys", "description": "Delta keys", "metadata": vars{"tier": "1"}},
	} {
		b := createBenefit(t, s, org.Token, in)
		s.Exec(t, `UPDATE benefits SET created_at = now() - make_interval(mins => $2) WHERE id = $1`, b.ID, 10-i)
	}
	for _, tc := range []struct {
		name string
		vars vars
		want []string
	}{
		{"the default order is newest first", nil, []string{"Delta keys", "Charlie discord", "Alpha keys", "Bravo custom"}},
		{"filtering by one type", vars{"filter": vars{"type": []string{"license_keys"}}}, []string{"Delta keys", "Alpha keys"}},
		{"types are OR-ed", vars{"filter": vars{"type": []string{"custom", "discord"}}}, []string{"Charlie discord", "Bravo custom"}},
		{"a type without benefits", vars{"filter": vars{"type": []string{"downloadables"}}}, []string{}},
		{"a description query", vars{"filter": vars{"query": "KEYS"}}, []string{"Delta keys", "Alpha keys"}},
		{"a metadata filter", vars{"filter": vars{"metadata": []vars{{"key": "tier", "values": []string{"1"}}}}}, []string{"Delta keys", "Bravo custom"}},
		{"type and metadata together", vars{"filter": vars{"type": []string{"custom"}, "metadata": []vars{{"key": "tier", "values": []string{"1"}}}}}, []string{"Bravo custom"}},
		{"sorting by description", vars{"sorting": []string{"description"}}, []string{"Alpha keys", "Bravo custom", "Charlie discord", "Delta keys"}},
		{"sorting by type then description descending", vars{"sorting": []string{"type", "-description"}},
			[]string{"Bravo custom", "Charlie discord", "Delta keys", "Alpha keys"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out struct {
				Benefits struct {
					Items      []struct{ Description string }
					Pagination struct{ TotalCount int }
				}
			}
			s.Query(t, org.Token, `query($sorting: [String!], $filter: BenefitFilter) {
				benefits(sorting: $sorting, filter: $filter) { items { description } pagination { totalCount } } }`, tc.vars, &out)
			got := []string{}
			for _, it := range out.Benefits.Items {
				got = append(got, it.Description)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("descriptions (-want +got):\n%s", diff)
			}
			if out.Benefits.Pagination.TotalCount != len(tc.want) {
				t.Errorf("totalCount = %d, want %d", out.Benefits.Pagination.TotalCount, len(tc.want))
			}
		})
	}
	t.Run("an unknown benefit type is a GraphQL validation error", func(t *testing.T) {
		res := s.Do(t, org.Token, `{ benefits(filter: {type: [coupons]}) { items { id } } }`, nil)
		if len(res.Errors) != 1 || (res.Errors[0].Extensions.Code == "INTERNAL" && res.Errors[0].Extensions.Reason == "InternalServerError") {
			t.Errorf("response = %s", res.Body)
		}
	})
}
