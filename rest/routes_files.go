package rest

import (
	"net/http"

	"till/resolvers"
	"till/rest/fastapi"
)

// fileRoutes serve an organization's files: list, create (start an upload), complete the
// upload, rename and delete. The bytes never pass through these routes: clients PUT them to
// the presigned part URLs, and public media links are served by MediaHandler.
func fileRoutes() []Route {
	idParam := PathUUID4("id", "id")
	return []Route{
		{Method: http.MethodGet, Path: "/v1/files/", Operation: "ListFiles", Field: "files",
			Params: []fastapi.Param{Page(), Limit(), Filter("organization_id", "organizationId", fastapi.UUID4{}), Filter("ids", "ids", fastapi.UUID4{})}},
		{Method: http.MethodPost, Path: "/v1/files/", Operation: "CreateFile", Field: "createFile",
			Status: http.StatusCreated, Body: &fastapi.Body{Var: "input", Schema: fileCreate()}},
		{Method: http.MethodPost, Path: "/v1/files/{id}/uploaded", Operation: "CompleteFileUpload",
			Field: "completeFileUpload", Params: []fastapi.Param{idParam}, Body: &fastapi.Body{Var: "input", Schema: fileUploadCompleted()}},
		{Method: http.MethodPatch, Path: "/v1/files/{id}", Operation: "UpdateFile", Field: "updateFile",
			Params: []fastapi.Param{idParam}, Body: &fastapi.Body{Var: "input", Schema: filePatch()}},
		{Method: http.MethodDelete, Path: "/v1/files/{id}", Operation: "DeleteFile", Params: []fastapi.Param{idParam},
			Status: http.StatusNoContent},
	}
}

// fileCreate is FileCreate: one *FileCreate member per service, picked by the service
// field. The members differ in their mime_type and size limits, which come from the use
// case's rules so that GraphQL and /v1 refuse the same files.
func fileCreate() fastapi.Tagged {
	part := fastapi.Object{Name: "S3FileCreatePart", Fields: []fastapi.Field{
		{Name: "number", Schema: fastapi.Int{}, Required: true},
		{Name: "chunk_start", Schema: fastapi.Int{}, Required: true},
		{Name: "chunk_end", Schema: fastapi.Int{}, Required: true},
		{Name: "checksum_sha256_base64", Schema: fastapi.Nullable{Schema: fastapi.String{}}},
	}}
	upload := fastapi.Object{Name: "S3FileCreateMultipart", Fields: []fastapi.Field{
		{Name: "parts", Schema: fastapi.List{Items: part, MaxLength: 10000}, Required: true},
	}}
	names := map[string]string{
		"downloadable":            "DownloadableFileCreate",
		"product_media":           "ProductMediaFileCreate",
		"organization_avatar":     "OrganizationAvatarFileCreate",
		"support_case_attachment": "SupportCaseAttachmentFileCreate",
	}
	t := fastapi.Tagged{Field: "service"}
	for _, rule := range resolvers.FileServiceRules() {
		var mime fastapi.Schema = fastapi.String{}
		if rule.MimePattern != "" {
			mime = fastapi.NewRegex(rule.MimePattern)
		}
		size := fastapi.Int{}
		if rule.MaxSize > 0 {
			size.Le = fastapi.At(rule.MaxSize)
		}
		t.Members = append(t.Members, fastapi.TaggedMember{Tag: string(rule.Service), Schema: fastapi.Object{Name: names[string(rule.Service)], Fields: []fastapi.Field{
			{Name: "organization_id", Schema: fastapi.Nullable{Schema: fastapi.UUID4{}}},
			{Name: "name", Schema: fastapi.String{}, Required: true},
			{Name: "mime_type", Schema: mime, Required: true},
			{Name: "size", Schema: size, Required: true},
			{Name: "checksum_sha256_base64", Schema: fastapi.Nullable{Schema: fastapi.String{}}},
			{Name: "upload", Schema: upload, Required: true},
			{Name: "service", Schema: fastapi.Enum{Name: "FileServiceTypes", Values: []string{string(rule.Service)}}, Required: true},
			{Name: "version", Schema: fastapi.Nullable{Schema: fastapi.String{}}},
		}}})
	}
	return t
}

// fileUploadCompleted is FileUploadCompleted. A part's checksum_sha256_base64 is required
// but may be null, as upstream declares it.
func fileUploadCompleted() fastapi.Object {
	part := fastapi.Object{Name: "S3FileUploadCompletedPart", Fields: []fastapi.Field{
		{Name: "number", Schema: fastapi.Int{}, Required: true},
		{Name: "checksum_etag", Schema: fastapi.String{}, Required: true},
		{Name: "checksum_sha256_base64", Schema: fastapi.Nullable{Schema: fastapi.String{}}, Required: true},
	}}
	return fastapi.Object{Name: "FileUploadCompleted", Fields: []fastapi.Field{
		{Name: "id", Schema: fastapi.String{}, Required: true},
		{Name: "path", Schema: fastapi.String{}, Required: true},
		{Name: "parts", Schema: fastapi.List{Items: part}, Required: true},
	}}
}

// filePatch is FilePatch.
func filePatch() fastapi.Object {
	return fastapi.Object{Name: "FilePatch", Fields: []fastapi.Field{
		{Name: "name", Schema: fastapi.Nullable{Schema: fastapi.String{}}},
		{Name: "version", Schema: fastapi.Nullable{Schema: fastapi.String{}}},
	}}
}
