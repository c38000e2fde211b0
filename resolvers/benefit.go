package resolvers

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/google/uuid"
	"github.com/jmoiron/sqlx"

	"till/graph/model"
	"till/storage"
)

// benefitSorts whitelists the sorting of the benefit list; newest first by default.
var benefitSorts = storage.BenefitSortColumns

// licenseKeysProperties mirrors BenefitLicenseKeysProperties (contract schema).
type licenseKeysProperties struct {
	Prefix  *string `json:"prefix"`
	Expires *struct {
		TTL       int    `json:"ttl"`
		Timeframe string `json:"timeframe"`
	} `json:"expires"`
	Activations *struct {
		Limit               int  `json:"limit"`
		EnableCustomerAdmin bool `json:"enable_customer_admin"`
	} `json:"activations"`
	LimitUsage *int `json:"limit_usage"`
}

// benefitProperties validates a type's properties and returns them normalised, with every
// declared key present as the contract's schemas require.
func benefitProperties(typ storage.BenefitType, raw storage.RawJSON) (storage.RawJSON, error) {
	if len(raw) == 0 || string(raw) == "null" {
		raw = storage.RawJSON("{}")
	}
	invalid := func(msg string, loc ...any) error {
		return Invalid("value_error", msg, json.RawMessage(raw), append([]any{"input", "properties"}, loc...)...)
	}
	switch typ {
	case storage.BenefitTypeLicenseKeys:
		var p licenseKeysProperties
		if err := json.Unmarshal(raw, &p); err != nil {
			return nil, invalid("Invalid license key properties: " + err.Error())
		}
		if p.Prefix != nil && len(*p.Prefix) > 32 {
			return nil, invalid("String should have at most 32 characters", "prefix")
		}
		if e := p.Expires; e != nil && (e.TTL <= 0 || (e.Timeframe != "year" && e.Timeframe != "month" && e.Timeframe != "day")) {
			return nil, invalid("Expiration needs a positive ttl and a timeframe of year, month or day.", "expires")
		}
		if a := p.Activations; a != nil && (a.Limit < 1 || a.Limit > 50) {
			return nil, invalid("Activation limit must be between 1 and 50.", "activations", "limit")
		}
		if p.LimitUsage != nil && *p.LimitUsage < 1 {
			return nil, invalid("Input should be greater than 0", "limit_usage")
		}
		return json.Marshal(p)
	case storage.BenefitTypeCustom:
		var p struct {
			Note *string `json:"note"`
		}
		if err := json.Unmarshal(raw, &p); err != nil {
			return nil, invalid("Invalid custom properties: " + err.Error())
		}
		return json.Marshal(p)
	case storage.BenefitTypeDownloadables:
		var p struct {
			Archived map[string]bool `json:"archived"`
			Files    []uuid.UUID     `json:"files"`
		}
		if err := json.Unmarshal(raw, &p); err != nil {
			return nil, invalid("Invalid downloadables properties: " + err.Error())
		}
		if len(p.Files) == 0 {
			return nil, invalid("At least one file is required.", "files")
		}
		// archived is keyed by file id: only the listed files' marks are kept, so the
		// properties name no file but the listed ones, which the write checks.
		archived := make(map[string]bool, len(p.Archived))
		for _, id := range p.Files {
			if v, ok := p.Archived[id.String()]; ok {
				archived[id.String()] = v
			}
		}
		p.Archived = archived
		return json.Marshal(p)
	case storage.BenefitTypeMeterCredit:
		var p struct {
			Units    *int       `json:"units"`
			Rollover bool       `json:"rollover"`
			MeterID  *uuid.UUID `json:"meter_id"`
		}
		if err := json.Unmarshal(raw, &p); err != nil || p.Units == nil || *p.Units <= 0 || p.MeterID == nil {
			return nil, invalid("Meter credit needs positive units and a meter_id.")
		}
		return json.Marshal(p)
	case storage.BenefitTypeDiscord, storage.BenefitTypeGithubRepository, storage.BenefitTypeFeatureFlag,
		storage.BenefitTypeSlackSharedChannel:
		var p map[string]any
		if err := json.Unmarshal(raw, &p); err != nil {
			return nil, invalid(fmt.Sprintf("Invalid %s properties: %v", typ, err))
		}
		return json.Marshal(p)
	}
	return nil, Invalid("enum", "Unknown benefit type.", typ, "input", "type")
}

// createBenefit validates and stores a benefit.
func (r *Resolver) createBenefit(ctx context.Context, in model.BenefitCreateInput) (*storage.Benefit, error) {
	orgID, err := targetOrganization(ctx, in.OrganizationID)
	if err != nil {
		return nil, err
	}
	if err := checkDescription(in.Description); err != nil {
		return nil, err
	}
	if err := checkMetadata(in.Metadata, "input", "metadata"); err != nil {
		return nil, err
	}
	props, err := benefitProperties(in.Type, in.Properties)
	if err != nil {
		return nil, err
	}
	vis := storage.BenefitVisibilityPublic
	if in.Visibility != nil {
		vis = *in.Visibility
	}
	b, err := storage.Audited(ctx, r.db, func(q sqlx.ExtContext) (*storage.Benefit, error) {
		return storage.CreateBenefit(ctx, q, orgID, storage.BenefitWrite{Type: in.Type, Description: in.Description,
			Visibility: vis, Properties: props, Metadata: in.Metadata})
	})
	return b, benefitRefError(err)
}

// benefitRefError reports a meter or file the properties name that is not the
// organization's as upstream's BenefitPropertiesValidationError does, the same for another
// organization's object as for a missing one.
func benefitRefError(err error) error {
	var re *storage.RefError
	if !errors.As(err, &re) {
		return err
	}
	if re.Table == "meters" {
		return Invalid("value_error", "This meter does not exist.", re.ID.String(), "input", "properties", "meter_id")
	}
	return Invalid("value_error", "File not found.", re.ID.String(), "input", "properties", "files", re.Index)
}

// checkDescription applies upstream's 3–42 character bound on benefit descriptions.
func checkDescription(d string) error {
	if n := len([]rune(d)); n < 3 {
		return Invalid("string_too_short", "String should have at least 3 characters", d, "input", "description")
	} else if n > 42 {
		return Invalid("string_too_long", "String should have at most 42 characters", d, "input", "description")
	}
	return nil
}

// updateBenefit applies the fields present in the input; a downloadables benefit's holders
// get its new files in the same transaction.
func (r *Resolver) updateBenefit(ctx context.Context, in model.BenefitUpdateInput) (*storage.Benefit, error) {
	cur, err := storage.GetBenefit(ctx, r.db, organizations(ctx), in.ID)
	if err != nil {
		return nil, notFoundOr(err, "")
	}
	var u storage.BenefitUpdate
	if v, ok := in.Description.ValueOK(); ok && v != nil {
		if err := checkDescription(*v); err != nil {
			return nil, err
		}
		u.Description = storage.Set(*v)
	}
	if v, ok := in.Visibility.ValueOK(); ok && v != nil {
		u.Visibility = storage.Set(*v)
	}
	if v, ok := in.Properties.ValueOK(); ok {
		props, err := benefitProperties(cur.Type, v)
		if err != nil {
			return nil, err
		}
		u.Properties = storage.Set(props)
	}
	if v, ok := in.Metadata.ValueOK(); ok {
		if err := checkMetadata(v, "input", "metadata"); err != nil {
			return nil, err
		}
		u.Metadata = storage.Set(v)
	}
	var b *storage.Benefit
	err = storage.InTx(ctx, r.db, func(tx *sqlx.Tx) error {
		if b, err = storage.UpdateBenefit(ctx, tx, organizations(ctx), in.ID, u); err != nil {
			return benefitRefError(err)
		}
		if u.Properties.IsSet() {
			return r.refreshDownloadables(ctx, tx, b)
		}
		return nil
	})
	return b, notFoundOr(err, "")
}

// deleteBenefit soft-deletes a deletable benefit.
func (r *Resolver) deleteBenefit(ctx context.Context, id uuid.UUID) (*storage.Benefit, error) {
	cur, err := storage.GetBenefit(ctx, r.db, organizations(ctx), id)
	if err != nil {
		return nil, notFoundOr(err, "")
	}
	if !cur.Deletable {
		return nil, NotPermitted("This benefit cannot be deleted.")
	}
	b, err := storage.Audited(ctx, r.db, func(q sqlx.ExtContext) (*storage.Benefit, error) {
		return storage.DeleteBenefit(ctx, q, organizations(ctx), id)
	})
	return b, notFoundOr(err, "")
}

// benefitsPage lists benefits.
func (r *Resolver) benefitsPage(ctx context.Context, a listArgs, f *model.BenefitFilter) (*model.BenefitPage, error) {
	w, sorts, err := a.windowAndSorts(benefitSorts)
	if err != nil {
		return nil, err
	}
	var lf storage.BenefitListFilter
	if f != nil {
		lf = storage.BenefitListFilter{Types: f.Type, Query: f.Query, Metadata: metadataOf(f.Metadata)}
	}
	p, err := storage.ListBenefits(ctx, r.db, organizations(ctx), lf, sorts, w)
	if err != nil {
		return nil, cursorErr(err, a)
	}
	record(ctx, p.Items)
	return &model.BenefitPage{Items: p.Items, Pagination: paginationOf(p.Total, w), PageInfo: pageInfo(p, w)}, nil
}

// licenseKeyProperties decodes a stored license_keys benefit's properties; they were
// validated when the benefit was stored, so a decoding failure leaves the zero value.
func licenseKeyProperties(b *storage.Benefit) licenseKeysProperties {
	var p licenseKeysProperties
	_ = json.Unmarshal(b.Properties, &p)
	return p
}

// licenseKeysOf decodes the typed license-key properties of a license_keys benefit.
func licenseKeysOf(b *storage.Benefit) *model.LicenseKeysProperties {
	if b.Type != storage.BenefitTypeLicenseKeys {
		return nil
	}
	var p licenseKeysProperties
	if json.Unmarshal(b.Properties, &p) != nil {
		return nil
	}
	out := &model.LicenseKeysProperties{Prefix: p.Prefix, LimitUsage: p.LimitUsage}
	if p.Expires != nil {
		out.Expires = &model.LicenseKeyExpiration{TTL: p.Expires.TTL, Timeframe: p.Expires.Timeframe}
	}
	if p.Activations != nil {
		out.Activations = &model.LicenseKeyActivations{Limit: p.Activations.Limit, EnableCustomerAdmin: p.Activations.EnableCustomerAdmin}
	}
	return out
}
