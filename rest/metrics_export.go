package rest

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"net/http"
	"time"

	"till/internal/rawjson"
)

// metricsCSV writes a metrics answer (GetMetrics, nulls excluded) as upstream's export
// does: a Timestamp column, then one column per metric returned headed by its display
// name, in catalog order; timestamps in Python's isoformat, CRLF line ends (the csv
// module's excel dialect). It fails only before writing anything.
func metricsCSV(w http.ResponseWriter, body json.RawMessage) error {
	return writeMetricsCSV(w, body, "polar-metrics.csv", "Timestamp", true)
}

// writeMetricsCSV writes a metrics answer as CSV: a column headed stamp, then one per metric
// returned, headed by its display name when named is set and by its slug otherwise. Upstream's
// export (named) writes timestamps in Python's isoformat, Till's as /v1 does.
func writeMetricsCSV(w http.ResponseWriter, body json.RawMessage, filename, stamp string, named bool) error {
	var answer struct {
		Periods []map[string]json.RawMessage `json:"periods"`
		Metrics json.RawMessage              `json:"metrics"`
	}
	if err := json.Unmarshal(body, &answer); err != nil {
		return err
	}
	slugs, names, err := metricColumns(answer.Metrics)
	if err != nil {
		return err
	}
	if !named {
		names = slugs
	}
	var buf bytes.Buffer
	cw := csv.NewWriter(&buf)
	cw.UseCRLF = true
	_ = cw.Write(append([]string{stamp}, names...))
	row := make([]string, len(slugs)+1)
	for _, p := range answer.Periods {
		var ts time.Time
		if err := json.Unmarshal(p["timestamp"], &ts); err != nil {
			return err
		}
		row[0] = ts.UTC().Format(time.RFC3339)
		if named {
			row[0] = ts.UTC().Format("2006-01-02T15:04:05-07:00")
		}
		for i, s := range slugs {
			row[i+1] = string(p[s])
		}
		_ = cw.Write(row)
	}
	cw.Flush()
	return writeExport(w, "text/csv", filename, buf.Bytes())
}

// metricColumns reads the metrics object's slugs in order and their display names.
func metricColumns(metrics json.RawMessage) (slugs, names []string, err error) {
	err = rawjson.Fields(metrics, func(slug, value []byte) error {
		var m struct {
			DisplayName string `json:"display_name"`
		}
		if err := json.Unmarshal(value, &m); err != nil {
			return err
		}
		slugs, names = append(slugs, string(slug)), append(names, m.DisplayName)
		return nil
	})
	return slugs, names, err
}

// metricsTillCSV writes a metrics answer as Till's own CSV export: a timestamp column and one
// column per metric returned, headed by the slugs (the /v1 field names), RFC 3339 UTC
// timestamps, numbers as /v1 writes them.
func metricsTillCSV(w http.ResponseWriter, body json.RawMessage) error {
	return writeMetricsCSV(w, body, "metrics.csv", "timestamp", false)
}

// metricsJSONLines writes a metrics answer as JSON lines: each period's object, as /v1 writes
// it, on a line of its own.
func metricsJSONLines(w http.ResponseWriter, body json.RawMessage) error {
	var answer struct {
		Periods []json.RawMessage `json:"periods"`
	}
	if err := json.Unmarshal(body, &answer); err != nil {
		return err
	}
	var buf bytes.Buffer
	for _, p := range answer.Periods {
		buf.Write(p)
		buf.WriteByte('\n')
	}
	return writeExport(w, mediaJSONLines, "metrics.jsonl", buf.Bytes())
}

// writeExport sends a whole export body as an attachment.
func writeExport(w http.ResponseWriter, media, filename string, body []byte) error {
	w.Header().Set("Content-Type", media+"; charset=utf-8")
	w.Header().Set("Content-Disposition", `attachment; filename="`+filename+`"`)
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(body) // a client gone mid-body is not the server's error
	return nil
}
