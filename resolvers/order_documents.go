package resolvers

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"time"

	"github.com/google/uuid"
	"github.com/jmoiron/sqlx"

	"till/graph/model"
	"till/internal/auth"
	"till/internal/invoice"
	"till/internal/jobs"
	"till/storage"
)

// Order documents (contract §4.6): invoices are rendered on request by a job, receipts on
// first read of a paid order. Both are PDFs in the blob store, read through short-lived
// signed URLs.

// Job kinds that render order documents.
const (
	JobOrderInvoice = "order.invoice"
	JobOrderReceipt = "order.receipt"
)

// documentURLTTL is how long a document link works: long enough to follow, short enough
// that a leaked link soon stops working.
const documentURLTTL = 15 * time.Minute

// documentArgs are a document job's arguments.
type documentArgs struct {
	OrderID uuid.UUID `json:"order_id"`
}

// generateOrderInvoice schedules the invoice of an order of the caller's organizations, or
// of the session customer (customerID), as upstream's trigger_invoice_generation: draft and
// void orders are refused, billing name and address are required, and an invoice that
// already shows the current details is not rendered again.
func (r *Resolver) generateOrderInvoice(ctx context.Context, customerID *uuid.UUID, id uuid.UUID) error {
	err := storage.InTx(ctx, r.db, func(tx *sqlx.Tx) error {
		o, err := storage.LockOrder(ctx, tx, organizations(ctx), customerID, id)
		if err != nil {
			return notFoundOr(err, "")
		}
		if o.Status == storage.OrderStatusDraft || o.Status == storage.OrderStatusVoid {
			return &Error{Code: CodeOrderNotEligibleForInvoice,
				Detail: "Order " + o.ID.String() + " is not eligible for invoice generation (current status: " + string(o.Status) + ")."}
		}
		if o.BillingName == nil || o.BillingAddress == nil {
			return &Error{Code: CodeMissingInvoiceBillingDetails,
				Detail: "Billing name and address are required to generate an invoice for this order."}
		}
		customer, err := r.orderCustomer(ctx, tx, o)
		if err != nil {
			return err
		}
		if o.InvoicePath != nil && o.InvoiceChecksum != nil && *o.InvoiceChecksum == invoiceChecksum(o, customer) {
			return nil
		}
		return r.enqueueDocument(ctx, tx, JobOrderInvoice, o)
	})
	if err == nil {
		r.jobsQueued()
	}
	return err
}

// jobsQueued tells the worker that committed jobs wait.
func (r *Resolver) jobsQueued() {
	if r.jobsQueuedFn != nil {
		r.jobsQueuedFn()
	}
}

// enqueueDocument schedules a document job for the order, once: a request while one is
// waiting or running adds nothing.
func (r *Resolver) enqueueDocument(ctx context.Context, tx sqlx.ExtContext, kind string, o *storage.Order) error {
	key := kind + ":" + o.ID.String()
	_, _, err := storage.InsertJob(ctx, tx, storage.JobInsert{Kind: kind, Args: documentArgs{OrderID: o.ID},
		OrganizationID: &o.OrganizationID, UniqueKey: &key, MaxAttempts: 10})
	return err
}

// orderInvoice is the link to an order's invoice, or InvoiceDoesNotExist before one is
// rendered.
func (r *Resolver) orderInvoice(ctx context.Context, customerID *uuid.UUID, id uuid.UUID) (*model.OrderDocument, error) {
	o, err := storage.GetOrder(ctx, r.db, organizations(ctx), customerID, id)
	if err != nil {
		return nil, notFoundOr(err, "")
	}
	if o.InvoicePath == nil {
		return nil, &Error{Code: CodeInvoiceDoesNotExist, Detail: "No invoice exists for order " + o.ID.String() + "."}
	}
	return r.documentLink(ctx, *o.InvoicePath)
}

// orderReceipt is the link to a paid order's receipt, as upstream's get_order_receipt: no
// receipt number (unpaid) is ReceiptNotAllocated; a number without a rendered receipt
// schedules it and answers DocumentPending.
func (r *Resolver) orderReceipt(ctx context.Context, id uuid.UUID) (*model.OrderDocument, error) {
	o, err := storage.GetOrder(ctx, r.db, organizations(ctx), nil, id)
	if err != nil {
		return nil, notFoundOr(err, "")
	}
	if o.ReceiptNumber == nil {
		return nil, &Error{Code: CodeReceiptNotAllocated, Detail: "No receipt allocated for order " + o.ID.String() + "."}
	}
	if o.ReceiptPath == nil {
		if err := r.enqueueDocument(ctx, r.db, JobOrderReceipt, o); err != nil {
			return nil, err
		}
		r.jobsQueued()
		return nil, &Error{Code: CodeDocumentPending, Detail: "The receipt of order " + o.ID.String() + " is being generated."}
	}
	return r.documentLink(ctx, *o.ReceiptPath)
}

func (r *Resolver) documentLink(ctx context.Context, path string) (*model.OrderDocument, error) {
	if r.blobs == nil {
		return nil, errors.New("no blob store configured")
	}
	url, err := r.blobs.SignedURL(ctx, path, documentURLTTL, "")
	if err != nil {
		return nil, err
	}
	return &model.OrderDocument{URL: url}, nil
}

// portalCustomer is the session's customer id, for the portal twins.
func portalCustomer(ctx context.Context) *uuid.UUID {
	p := auth.FromContext(ctx)
	return &p.CustomerID
}

// invoiceChecksum fingerprints what an invoice shows of the order's billing details, as
// upstream's [template version, billing_name, billing_address, tax_id, locale].
func invoiceChecksum(o *storage.Order, c *storage.Customer) string {
	b, _ := json.Marshal([]any{invoice.TemplateVersion, o.BillingName, o.BillingAddress, c.TaxID(), c.Locale})
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// JobHandlers are the job kinds this resolver runs, for the worker `serve` starts.
func (r *Resolver) JobHandlers() map[string]jobs.Handler {
	return map[string]jobs.Handler{
		JobOrderInvoice:   r.renderInvoiceJob,
		JobOrderReceipt:   r.renderReceiptJob,
		JobStripeEvent:    r.applyStripeEventJob,
		JobCheckoutCharge: r.retryCheckoutChargeJob,
		JobMailSend:       r.sendMailJob,
	}
}

// renderInvoiceJob renders the invoice from the order as it is now, stores it under the same
// key each time (a new rendering replaces the old), records it and announces order.updated,
// all committed with the job.
func (r *Resolver) renderInvoiceJob(ctx context.Context, tx *sqlx.Tx, job *storage.Job) error {
	o, c, err := r.documentSubject(ctx, tx, job)
	if err != nil {
		return err
	}
	if o.InvoiceNumber == nil {
		return jobs.Discard(errors.New("order " + o.ID.String() + " has no invoice number"))
	}
	path, err := r.storeDocument(ctx, tx, o, c, invoice.KindInvoice, *o.InvoiceNumber)
	if err != nil {
		return err
	}
	if _, err := storage.SetOrderInvoice(ctx, tx, o.ID, path, invoiceChecksum(o, c)); err != nil {
		return err
	}
	return r.emit(ctx, tx, o.OrganizationID, "order.updated", o.ID)
}

// renderReceiptJob renders and records a paid order's receipt.
func (r *Resolver) renderReceiptJob(ctx context.Context, tx *sqlx.Tx, job *storage.Job) error {
	o, c, err := r.documentSubject(ctx, tx, job)
	if err != nil {
		return err
	}
	if o.ReceiptNumber == nil {
		return jobs.Discard(errors.New("order " + o.ID.String() + " has no receipt number"))
	}
	path, err := r.storeDocument(ctx, tx, o, c, invoice.KindReceipt, *o.ReceiptNumber)
	if err != nil {
		return err
	}
	_, err = storage.SetOrderReceipt(ctx, tx, o.ID, path)
	return err
}

// documentSubject reads the job's order, locked so a concurrent billing change waits for the
// rendering to commit, and its customer.
func (r *Resolver) documentSubject(ctx context.Context, tx *sqlx.Tx, job *storage.Job) (*storage.Order, *storage.Customer, error) {
	var args documentArgs
	if err := jobs.DecodeArgs(job, &args); err != nil {
		return nil, nil, err
	}
	orgs := []uuid.UUID{}
	if job.OrganizationID != nil {
		orgs = append(orgs, *job.OrganizationID)
	}
	o, err := storage.LockOrder(ctx, tx, orgs, nil, args.OrderID)
	if errors.Is(err, storage.ErrNotFound) {
		return nil, nil, jobs.Discard(err)
	}
	if err != nil {
		return nil, nil, err
	}
	c, err := r.orderCustomer(ctx, tx, o)
	return o, c, err
}

func (r *Resolver) orderCustomer(ctx context.Context, q sqlx.ExtContext, o *storage.Order) (*storage.Customer, error) {
	cs, err := storage.CustomersByIDs(ctx, q, []uuid.UUID{o.CustomerID})
	if err != nil {
		return nil, err
	}
	if cs[0] == nil {
		return nil, errors.New("order " + o.ID.String() + ": customer not found")
	}
	return cs[0], nil
}

// storeDocument renders the document and stores it at its key, returning the key.
func (r *Resolver) storeDocument(ctx context.Context, tx sqlx.ExtContext, o *storage.Order, c *storage.Customer,
	kind invoice.Kind, number string) (string, error) {
	doc, err := r.invoiceOf(ctx, tx, o, c, kind, number)
	if err != nil {
		return "", err
	}
	pdf, err := invoice.RenderBytes(doc)
	if err != nil {
		return "", jobs.Discard(err)
	}
	name := "Invoice-" + number + ".pdf"
	if kind == invoice.KindReceipt {
		name = "Receipt-" + number + ".pdf"
	}
	key, err := blobKey(string(kind)+"s", o.OrganizationID.String(), o.ID.String(), name)
	if err != nil {
		return "", jobs.Discard(err)
	}
	if r.blobs == nil {
		return "", errors.New("no blob store configured")
	}
	if _, err := r.blobs.Put(ctx, key, bytes.NewReader(pdf), int64(len(pdf)), "application/pdf"); err != nil {
		return "", err
	}
	return key, nil
}
