package rest

import (
	"net/http"

	"till/resolvers"
)

// fileRoutes serve an organization's files: list, create (start an upload), complete the
// upload, rename and delete. The bytes never pass through these routes: clients PUT them to
// the presigned part URLs, and public media links are served by MediaHandler.
func fileRoutes() []Route {
	idParam := PathUUID4("id", "id")
	return []Route{
		{Method: http.MethodGet, Path: "/v1/files/", Operation: "ListFiles", Field: "files",
			Params: []Param{Page(), Limit(), Filter("organization_id", "organizationId", UUID4{}), Filter("ids", "ids", UUID4{})}},
		{Method: http.MethodPost, Path: "/v1/files/", Operation: "CreateFile", Field: "createFile",
			Status: http.StatusCreated, Body: &Body{Var: "input", Schema: fileCreate()}},
		{Method: http.MethodPost, Path: "/v1/files/{id}/uploaded", Operation: "CompleteFileUpload",
			Field: "completeFileUpload", Params: []Param{idParam}, Body: &Body{Var: "input", Schema: fileUploadCompleted()}},
		{Method: http.MethodPatch, Path: "/v1/files/{id}", Operation: "UpdateFile", Field: "updateFile",
			Params: []Param{idParam}, Body: &Body{Var: "input", Schema: filePatch()}},
		{Method: http.MethodDelete, Path: "/v1/files/{id}", Operation: "DeleteFile", Params: []Param{idParam},
			Status: http.StatusNoContent},
	}
}

// fileCreate is FileCreate: one *FileCreate member per service, picked by the service
// field. The members differ in their mime_type and size limits, which come from the use
// case's rules so that GraphQL and /v1 refuse the same files.
func fileCreate() Tagged {
	part := Object{Name: "S3FileCreatePart", Fields: []Field{
		{Name: "number", Schema: Int{}, Required: true},
		{Name: "chunk_start", Schema: Int{}, Required: true},
		{Name: "chunk_end", Schema: Int{}, Required: true},
		{Name: "checksum_sha256_base64", Schema: Nullable{Schema: String{}}},
	}}
	upload := Object{Name: "S3FileCreateMultipart", Fields: []Field{
		{Name: "parts", Schema: List{Items: part, MaxLength: 10000}, Required: true},
	}}
	names := map[string]string{
		"downloadable":            "DownloadableFileCreate",
		"product_media":           "ProductMediaFileCreate",
		"organization_avatar":     "OrganizationAvatarFileCreate",
		"support_case_attachment": "SupportCaseAttachmentFileCreate",
	}
	t := Tagged{Field: "service"}
	for _, rule := range resolvers.FileServiceRules() {
		var mime Schema = String{}
		if rule.MimePattern != "" {
			mime = NewRegex(rule.MimePattern)
		}
		size := Int{}
		if rule.MaxSize > 0 {
			size.Le = At(rule.MaxSize)
		}
		t.Members = append(t.Members, TaggedMember{Tag: rule.Service, Schema: Object{Name: names[rule.Service], Fields: []Field{
			{Name: "organization_id", Schema: Nullable{Schema: UUID4{}}},
			{Name: "name", Schema: String{}, Required: true},
			{Name: "mime_type", Schema: mime, Required: true},
			{Name: "size", Schema: size, Required: true},
			{Name: "checksum_sha256_base64", Schema: Nullable{Schema: String{}}},
			{Name: "upload", Schema: upload, Required: true},
			{Name: "service", Schema: Enum{Name: "FileServiceTypes", Values: []string{rule.Service}}, Required: true},
			{Name: "version", Schema: Nullable{Schema: String{}}},
		}}})
	}
	return t
}

// fileUploadCompleted is FileUploadCompleted. A part's checksum_sha256_base64 is required
// but may be null, as upstream declares it.
func fileUploadCompleted() Object {
	part := Object{Name: "S3FileUploadCompletedPart", Fields: []Field{
		{Name: "number", Schema: Int{}, Required: true},
		{Name: "checksum_etag", Schema: String{}, Required: true},
		{Name: "checksum_sha256_base64", Schema: Nullable{Schema: String{}}, Required: true},
	}}
	return Object{Name: "FileUploadCompleted", Fields: []Field{
		{Name: "id", Schema: String{}, Required: true},
		{Name: "path", Schema: String{}, Required: true},
		{Name: "parts", Schema: List{Items: part}, Required: true},
	}}
}

// filePatch is FilePatch.
func filePatch() Object {
	return Object{Name: "FilePatch", Fields: []Field{
		{Name: "name", Schema: Nullable{Schema: String{}}},
		{Name: "version", Schema: Nullable{Schema: String{}}},
	}}
}
