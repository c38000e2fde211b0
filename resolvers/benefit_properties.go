package resolvers

import (
	"encoding/json"

	"github.com/google/uuid"

	"till/graph/model"
	"till/storage"
)

// The typed views of Benefit.properties for the types whose properties benefitProperties
// normalises; like licenseKeysOf, each is nil for other types and for properties that do not
// decode (they were validated when stored).

// customPropertiesOf decodes a custom benefit's properties.
func customPropertiesOf(b *storage.Benefit) *model.BenefitCustomProperties {
	var p struct {
		Note *string `json:"note"`
	}
	if b.Type != storage.BenefitTypeCustom || json.Unmarshal(b.Properties, &p) != nil {
		return nil
	}
	return &model.BenefitCustomProperties{Note: p.Note}
}

// downloadablesPropertiesOf decodes a downloadables benefit's files; archived, keyed by file
// id in /v1, becomes the list of archived files in the benefit's order.
func downloadablesPropertiesOf(b *storage.Benefit) *model.BenefitDownloadablesProperties {
	if b.Type != storage.BenefitTypeDownloadables {
		return nil
	}
	p := downloadablesOf(b)
	out := &model.BenefitDownloadablesProperties{Files: p.Files, ArchivedFiles: []uuid.UUID{}}
	if out.Files == nil {
		out.Files = []uuid.UUID{}
	}
	for _, id := range p.Files {
		if p.Archived[id.String()] {
			out.ArchivedFiles = append(out.ArchivedFiles, id)
		}
	}
	return out
}

// meterCreditPropertiesOf decodes a meter_credit benefit's properties.
func meterCreditPropertiesOf(b *storage.Benefit) *model.BenefitMeterCreditProperties {
	var p struct {
		Units    int       `json:"units"`
		Rollover bool      `json:"rollover"`
		MeterID  uuid.UUID `json:"meter_id"`
	}
	if b.Type != storage.BenefitTypeMeterCredit || json.Unmarshal(b.Properties, &p) != nil {
		return nil
	}
	return &model.BenefitMeterCreditProperties{Units: p.Units, Rollover: p.Rollover, MeterID: p.MeterID}
}
