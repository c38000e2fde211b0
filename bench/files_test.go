package bench

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// File upload benchmark sizes: a 1 GiB file in 8 MiB parts, PUT by uploadClients
// connections at once, as a client with a fast link would.
const (
	uploadFileSize  = 1 << 30
	uploadPartSize  = 8 << 20
	uploadClients   = 4
	uploadChunkSize = 1 << 20 // the generator's write size
	uploadRounds    = 3
)

// BenchmarkFileUpload uploads a 1 GiB file through `till serve`'s /v1 file API and its local
// store on loopback (POST /v1/files/, a PUT per 8 MiB part to the presigned URLs, POST
// /v1/files/{id}/uploaded) and compares its MB/s with `cp` of the same bytes on the same
// disk. Rounds alternate cp, upload and cp followed by a sync of the copy, each starting
// after a system-wide sync so no phase pays for the previous one's dirty pages; the medians
// are compared. The completed object is durable (fsynced before it appears), cp's copy is
// not, hence the cp+sync figure. The client computes its part digests before the clock
// starts, as upstream's client does before it creates the file. The server's peak RSS
// shows that parts stream through.
func BenchmarkFileUpload(b *testing.B) {
	srv := startTill(b)
	seed := srv.demo(b)
	src := filepath.Join(srv.dataDir, "upload-source.bin")
	writeRandomFile(b, src, uploadFileSize)
	parts := partsOf(b, src, uploadFileSize, uploadPartSize)
	b.ResetTimer()

	var cps, uploads, cpSyncs, sinks []time.Duration
	for range uploadRounds {
		cps = append(cps, timeCopy(b, src, false))
		uploads = append(uploads, timeUpload(b, srv, seed.OrganizationToken, src, parts))
		cpSyncs = append(cpSyncs, timeCopy(b, src, true))
		sinks = append(sinks, timeSink(b, src, parts))
	}
	b.StopTimer()

	mbps := func(d time.Duration) float64 { return float64(uploadFileSize) / 1e6 / d.Seconds() }
	upload, cp, cpSync, sink := median(uploads), median(cps), median(cpSyncs), median(sinks)
	b.ReportMetric(mbps(upload), "upload-MB/s")
	b.ReportMetric(mbps(cp), "cp-MB/s")
	b.ReportMetric(mbps(upload)/mbps(cp), "upload/cp")
	b.ReportMetric(mbps(upload)/mbps(cpSync), "upload/cp+sync")
	b.ReportMetric(mbps(upload)/mbps(sink), "upload/sink")
	b.ReportMetric(0, "ns/op")
	b.Logf("\n1 GiB in %d parts of 8 MiB, %d connections, %d rounds (median):\n"+
		"upload %s: %.0f MB/s\ncp %s: %.0f MB/s, ratio %.2f\ncp+sync %s: %.0f MB/s, ratio %.2f\n"+
		"the same PUTs to a sink that only checks SHA-256 %s: %.0f MB/s, ratio %.2f%s",
		len(parts), uploadClients, uploadRounds, seconds(uploads), mbps(upload), seconds(cps), mbps(cp), mbps(upload)/mbps(cp),
		seconds(cpSyncs), mbps(cpSync), mbps(upload)/mbps(cpSync), seconds(sinks), mbps(sink), mbps(upload)/mbps(sink),
		peakRSSLine(srv.cmd.Process.Pid))
}

// median is the middle of the durations.
func median(ds []time.Duration) time.Duration {
	sorted := slices.Clone(ds)
	slices.Sort(sorted)
	return sorted[len(sorted)/2]
}

// seconds lists the durations, e.g. "[1.02 0.98 1.10] s".
func seconds(ds []time.Duration) string {
	parts := make([]string, len(ds))
	for i, d := range ds {
		parts[i] = fmt.Sprintf("%.2f", d.Seconds())
	}
	return "[" + strings.Join(parts, " ") + "] s"
}

// syncAll flushes every dirty page of the system, so the next phase starts from a clean
// page cache.
func syncAll(b *testing.B) {
	b.Helper()
	if out, err := exec.Command("sync").CombinedOutput(); err != nil {
		b.Fatalf("sync: %v: %s", err, out)
	}
}

// writeRandomFile writes size incompressible bytes to path, a chunk at a time.
func writeRandomFile(b *testing.B, path string, size int64) {
	b.Helper()
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	rng := rand.NewChaCha8([32]byte{7})
	buf := make([]byte, uploadChunkSize)
	for written := int64(0); written < size; written += int64(len(buf)) {
		_, _ = rng.Read(buf)
		if _, err := f.Write(buf); err != nil {
			b.Fatal(err)
		}
	}
}

// uploadPart is a part as the create request declares it.
type uploadPart struct {
	Number       int    `json:"number"`
	ChunkStart   int64  `json:"chunk_start"`
	ChunkEnd     int64  `json:"chunk_end"`
	SHA256Base64 string `json:"checksum_sha256_base64"`
}

// partsOf splits the file into parts of partSize and digests each.
func partsOf(b *testing.B, path string, size, partSize int64) []uploadPart {
	b.Helper()
	f, err := os.Open(path)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	var parts []uploadPart
	for start := int64(0); start < size; start += partSize {
		end := min(start+partSize, size)
		h := sha256.New()
		if _, err := io.Copy(h, io.NewSectionReader(f, start, end-start)); err != nil {
			b.Fatal(err)
		}
		parts = append(parts, uploadPart{Number: len(parts) + 1, ChunkStart: start, ChunkEnd: end,
			SHA256Base64: base64.StdEncoding.EncodeToString(h.Sum(nil))})
	}
	return parts
}

// timeCopy times `cp` of src to a new file beside it (and a sync of the copy when sync is
// set), then removes the copy.
func timeCopy(b *testing.B, src string, sync bool) time.Duration {
	b.Helper()
	dst := src + ".copy"
	syncAll(b)
	start := time.Now()
	if out, err := exec.Command("cp", src, dst).CombinedOutput(); err != nil {
		b.Fatalf("cp: %v: %s", err, out)
	}
	if sync {
		if out, err := exec.Command("sync", dst).CombinedOutput(); err != nil {
			b.Fatalf("sync: %v: %s", err, out)
		}
	}
	elapsed := time.Since(start)
	if err := os.Remove(dst); err != nil {
		b.Fatal(err)
	}
	return elapsed
}

// fileUpload is the part of POST /v1/files/'s answer the client needs.
type fileUpload struct {
	ID     string `json:"id"`
	Upload struct {
		ID    string `json:"id"`
		Path  string `json:"path"`
		Parts []struct {
			Number  int               `json:"number"`
			Start   int64             `json:"chunk_start"`
			End     int64             `json:"chunk_end"`
			URL     string            `json:"url"`
			Headers map[string]string `json:"headers"`
		} `json:"parts"`
	} `json:"upload"`
}

// timeUpload creates the file, PUTs its parts from uploadClients connections and completes
// it, and returns the time from the create request to the completion's answer. It checks
// that the answer says the file is uploaded with the right size.
func timeUpload(b *testing.B, srv *tillServer, token, src string, parts []uploadPart) time.Duration {
	b.Helper()
	sum := sha256.New()
	f, err := os.Open(src)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	if _, err := io.Copy(sum, f); err != nil {
		b.Fatal(err)
	}
	create := map[string]any{
		"name":                   "bench.bin",
		"mime_type":              "application/octet-stream",
		"size":                   uploadFileSize,
		"checksum_sha256_base64": base64.StdEncoding.EncodeToString(sum.Sum(nil)),
		"service":                "downloadable",
		"upload":                 map[string]any{"parts": parts},
	}
	syncAll(b)
	start := time.Now()
	var created fileUpload
	v1JSON(b, srv, token, http.MethodPost, "/v1/files/", create, http.StatusCreated, &created)
	createdAt := time.Now()
	procs := processes{till: srv.cmd.Process.Pid}
	before := procs.sample()

	targets := make([]partTarget, len(created.Upload.Parts))
	for i, p := range created.Upload.Parts {
		targets[i] = partTarget{start: p.Start, end: p.End, url: p.URL, headers: p.Headers}
	}
	etags, err := putParts(f, targets)
	if err != nil {
		b.Fatal(err)
	}
	type completed struct {
		Number int    `json:"number"`
		ETag   string `json:"checksum_etag"`
		SHA256 string `json:"checksum_sha256_base64"`
	}
	done := make([]completed, len(etags))
	for i, etag := range etags {
		done[i] = completed{parts[i].Number, etag, parts[i].SHA256Base64}
	}
	putAt := time.Now()
	cpu := before.since(procs.sample())
	var file struct {
		IsUploaded bool  `json:"is_uploaded"`
		Size       int64 `json:"size"`
	}
	v1JSON(b, srv, token, http.MethodPost, "/v1/files/"+created.ID+"/uploaded", map[string]any{
		"id": created.Upload.ID, "path": created.Upload.Path, "parts": done}, http.StatusOK, &file)
	elapsed := time.Since(start)
	b.Logf("create %.0f ms, parts %.2f s (CPU cores: client %.2f, till %.2f; machine %.0f%% busy), complete %.0f ms",
		ms(createdAt.Sub(start)), putAt.Sub(createdAt).Seconds(), cpu.bench, cpu.till, 100*cpu.busy, ms(time.Since(putAt)))
	if !file.IsUploaded || file.Size != uploadFileSize {
		b.Fatalf("completed file: uploaded %v, size %d", file.IsUploaded, file.Size)
	}
	deleteFile(b, srv, token, created.ID)
	return elapsed
}

// deleteFile deletes an uploaded file, so the rounds do not fill the disk.
func deleteFile(b *testing.B, srv *tillServer, token, id string) {
	b.Helper()
	if status, answer := srv.send(b, token, http.MethodDelete, "/v1/files/"+id, nil); status != http.StatusNoContent {
		b.Fatalf("DELETE /v1/files/%s: status %d: %s", id, status, answer)
	}
}

// v1JSON sends a JSON request to /v1 as the token and decodes the answer, which must have
// status want.
func v1JSON(b *testing.B, srv *tillServer, token, method, path string, body any, want int, out any) {
	b.Helper()
	status, answer := srv.send(b, token, method, path, body)
	if status != want {
		b.Fatalf("%s %s: status %d, want %d: %s", method, path, status, want, answer)
	}
	if err := json.Unmarshal(answer, out); err != nil {
		b.Fatalf("%s %s: %v: %s", method, path, err, answer)
	}
}
