package resolvers

import (
	"encoding/json"
	"fmt"

	"github.com/google/uuid"

	"till/graph/model"
	"till/storage"
)

// A grant keeps its properties and its error as the jsonb /v1 renders, written only by the
// grant use cases; GraphQL reads them typed. The member of BenefitGrantProperties follows
// what the grant recorded rather than its benefit's type, so a license-key grant that has
// not issued its key yet reads as empty, as /v1 shows it ({}).

// grantErrorOf decodes why a grant's last attempt failed; nil when it did not.
func grantErrorOf(g *storage.BenefitGrant) (*model.BenefitGrantError, error) {
	if len(g.Error) == 0 || string(g.Error) == "null" {
		return nil, nil
	}
	var e model.BenefitGrantError
	if err := json.Unmarshal(g.Error, &e); err != nil {
		return nil, fmt.Errorf("grant %s error: %w", g.ID, err)
	}
	return &e, nil
}

// grantPropertiesOf decodes what a grant produced into its member of BenefitGrantProperties.
func grantPropertiesOf(g *storage.BenefitGrant) (model.BenefitGrantProperties, error) {
	var p struct {
		LicenseKeyID *uuid.UUID  `json:"license_key_id"`
		DisplayKey   string      `json:"display_key"`
		Files        []uuid.UUID `json:"files"`
	}
	if len(g.Properties) > 0 {
		if err := json.Unmarshal(g.Properties, &p); err != nil {
			return nil, fmt.Errorf("grant %s properties: %w", g.ID, err)
		}
	}
	switch {
	case p.LicenseKeyID != nil:
		return model.BenefitGrantLicenseKeysProperties{DisplayKey: p.DisplayKey, LicenseKeyID: *p.LicenseKeyID}, nil
	case p.Files != nil:
		return model.BenefitGrantDownloadablesProperties{Files: p.Files}, nil
	}
	return model.BenefitGrantEmptyProperties{Empty: true}, nil
}
