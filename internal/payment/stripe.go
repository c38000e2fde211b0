package payment

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/stripe/stripe-go/v86"
)

// StripeConfig is what the Stripe processor needs from the operator.
type StripeConfig struct {
	// SecretKey is the account's API key: sk_test_…, sk_live_… or a restricted rk_… key.
	SecretKey string
	// WebhookSecret is the signing secret (whsec_…) of the endpoint Stripe sends events to.
	WebhookSecret string
	// APIURL replaces https://api.stripe.com: stripe-mock, or a proxy in front of Stripe.
	APIURL string
}

// stripeTimeout bounds one HTTP exchange with Stripe; the client retries a failed one
// twice, with the same idempotency key, before a call gives up.
const stripeTimeout = 60 * time.Second

// StripeProcessor takes payments through a Stripe account with stripe-go, the official
// client, which signs requests, sends idempotency keys, retries what is safe to retry and
// types Stripe's errors. It maps everything it gets back into this package's types, so
// use cases never see Stripe's. It is safe for concurrent use.
type StripeProcessor struct {
	client        *stripe.Client
	webhookSecret string
}

// NewStripe returns a processor for the account cfg.SecretKey belongs to.
func NewStripe(cfg StripeConfig) (*StripeProcessor, error) {
	if cfg.SecretKey == "" {
		return nil, errors.New("payment: a Stripe secret key is required")
	}
	backend := &stripe.BackendConfig{
		HTTPClient:      &http.Client{Timeout: stripeTimeout},
		LeveledLogger:   &stripe.LeveledLogger{Level: stripe.LevelNull},
		EnableTelemetry: stripe.Bool(false),
	}
	if cfg.APIURL != "" {
		backend.URL = stripe.String(cfg.APIURL)
	}
	client := stripe.NewClient(cfg.SecretKey, stripe.WithBackends(stripe.NewBackendsWithConfig(backend)))
	return &StripeProcessor{client: client, webhookSecret: cfg.WebhookSecret}, nil
}

// Name implements Processor.
func (p *StripeProcessor) Name() string { return "stripe" }

// SavePaymentMethod implements Processor. The token is what Stripe.js gave the buyer's page:
// a card token (tok_visa, …), which becomes a PaymentMethod; a PaymentMethod (pm_…); or a
// ConfirmationToken (ctoken_…, as upstream's checkout sends), which the SetupIntent itself
// confirms. A SetupIntent confirmed for off-session use attaches the method to the request's
// Stripe Customer, so renewals can charge it while the customer is away. A request naming no
// Stripe Customer gets a new one, made after a card token or PaymentMethod proved valid.
func (p *StripeProcessor) SavePaymentMethod(ctx context.Context, req SaveRequest) (Method, error) {
	var pm *stripe.PaymentMethod
	confirmation := strings.HasPrefix(req.Token, "ctoken_")
	if !confirmation {
		var err error
		if pm, err = p.tokenMethod(ctx, req.Token); err != nil {
			return Method{}, err
		}
	}
	customer := req.Customer.ProcessorID
	if customer == "" {
		var err error
		if customer, err = p.createCustomer(ctx, req.Customer); err != nil {
			return Method{}, err
		}
	}
	params := &stripe.SetupIntentCreateParams{
		Customer: stripe.String(customer),
		Usage:    stripe.String(string(stripe.SetupIntentUsageOffSession)),
		Confirm:  stripe.Bool(true),
	}
	if confirmation {
		params.ConfirmationToken = stripe.String(req.Token)
		params.PaymentMethodTypes = []*string{stripe.String(string(stripe.PaymentMethodTypeCard))}
		params.AddExpand("payment_method")
	} else {
		params.PaymentMethod = stripe.String(pm.ID)
		params.PaymentMethodTypes = []*string{stripe.String(string(pm.Type))}
	}
	si, err := p.client.V1SetupIntents.Create(ctx, params)
	if err != nil {
		if isInvalidRequest(err) {
			// A confirmation token that is no longer valid, or a method saved to another
			// customer: the buyer's token is at fault, not Till.
			return Method{}, fmt.Errorf("%w: %s", ErrInvalidToken, stripeMessage(err))
		}
		return Method{}, chargeError(ctx, "saving a payment method", err)
	}
	switch si.Status {
	case stripe.SetupIntentStatusSucceeded, stripe.SetupIntentStatusProcessing:
	case stripe.SetupIntentStatusRequiresAction:
		return Method{}, &ActionRequiredError{SetupIntentID: si.ID, ClientSecret: si.ClientSecret}
	case stripe.SetupIntentStatusRequiresPaymentMethod:
		return Method{}, declineOf(si.LastSetupError)
	default:
		return Method{}, fmt.Errorf("stripe: setup intent %s is %s", si.ID, si.Status)
	}
	if confirmation {
		if pm = si.PaymentMethod; pm == nil || pm.ID == "" {
			return Method{}, fmt.Errorf("stripe: setup intent %s names no payment method", si.ID)
		}
	}
	m := methodOf(pm)
	m.ProcessorCustomerID = customer
	return m, nil
}

// tokenMethod is the PaymentMethod a client-side token stands for: one Stripe.js made
// (pm_…), read back, or a card token (tok_…), from which a PaymentMethod is made.
func (p *StripeProcessor) tokenMethod(ctx context.Context, token string) (*stripe.PaymentMethod, error) {
	var pm *stripe.PaymentMethod
	var err error
	if strings.HasPrefix(token, "pm_") {
		pm, err = p.client.V1PaymentMethods.Retrieve(ctx, token, nil)
	} else {
		pm, err = p.client.V1PaymentMethods.Create(ctx, &stripe.PaymentMethodCreateParams{
			Type: stripe.String(string(stripe.PaymentMethodTypeCard)),
			Card: &stripe.PaymentMethodCreateCardParams{Token: stripe.String(token)},
		})
	}
	if err != nil {
		if isInvalidRequest(err) {
			return nil, fmt.Errorf("%w: %s", ErrInvalidToken, stripeMessage(err))
		}
		return nil, chargeError(ctx, "saving a payment method", err)
	}
	return pm, nil
}

// createCustomer creates the Stripe Customer of a Till customer. For a Till customer that
// exists, the idempotency key is made of its id and the details sent: Stripe answers a key
// it has seen (for a day) with its first answer, so concurrent saves for a customer that has
// no Stripe Customer yet all get the same one, while details changed meanwhile make a new
// key rather than one Stripe refuses for being reused with other parameters.
func (p *StripeProcessor) createCustomer(ctx context.Context, c CustomerRef) (string, error) {
	params := &stripe.CustomerCreateParams{}
	if c.Email != "" {
		params.Email = stripe.String(c.Email)
	}
	if c.Name != "" {
		params.Name = stripe.String(c.Name)
	}
	if c.TillID != "" {
		params.Metadata = map[string]string{"till_customer_id": c.TillID}
		sum := sha256.Sum256([]byte(c.TillID + "\x00" + c.Email + "\x00" + c.Name))
		params.SetIdempotencyKey("till-customer-" + c.TillID + "-" + hex.EncodeToString(sum[:8]))
	}
	customer, err := p.client.V1Customers.Create(ctx, params)
	if err != nil {
		return "", stripeFault(ctx, "creating a customer", err)
	}
	return customer.ID, nil
}

// methodOf describes a Stripe PaymentMethod as Till keeps it.
func methodOf(pm *stripe.PaymentMethod) Method {
	m := Method{ProcessorID: pm.ID, Type: string(pm.Type)}
	if card := pm.Card; card != nil {
		m.Brand, m.Last4, m.ExpMonth, m.ExpYear = string(card.Brand), card.Last4, int(card.ExpMonth), int(card.ExpYear)
		if card.Wallet != nil && card.Wallet.Type != "" {
			wallet := string(card.Wallet.Type)
			m.Wallet = &wallet
		}
	}
	return m
}

// Charge implements Processor: an off-session PaymentIntent, confirmed at once, on the
// customer the method was saved to, which the request names (a method saved before Till
// kept it is read first to find it). The charge's ID is the PaymentIntent's latest charge
// (ch_…), or the PaymentIntent's own id (pi_…) when Stripe reports no charge yet; Refund
// takes either. A PaymentIntent that is still processing is a Charge with Processing set:
// Stripe settles it later and reports the outcome by webhook.
func (p *StripeProcessor) Charge(ctx context.Context, req ChargeRequest) (Charge, error) {
	if req.Amount < 0 {
		return Charge{}, fmt.Errorf("payment: negative amount %d", req.Amount)
	}
	customer, methodType := req.ProcessorCustomerID, req.MethodType
	if customer == "" {
		pm, err := p.client.V1PaymentMethods.Retrieve(ctx, req.PaymentMethodID, nil)
		if err != nil {
			return Charge{}, stripeFault(ctx, "reading payment method "+req.PaymentMethodID, err)
		}
		if pm.Customer == nil || pm.Customer.ID == "" {
			return Charge{}, fmt.Errorf("stripe: payment method %s is not saved to a customer", pm.ID)
		}
		customer, methodType = pm.Customer.ID, string(pm.Type)
	}
	if methodType == "" {
		methodType = string(stripe.PaymentMethodTypeCard)
	}
	params := &stripe.PaymentIntentCreateParams{
		Amount:             stripe.Int64(req.Amount),
		Currency:           stripe.String(strings.ToLower(req.Currency)),
		Customer:           stripe.String(customer),
		PaymentMethod:      stripe.String(req.PaymentMethodID),
		PaymentMethodTypes: []*string{stripe.String(methodType)},
		OffSession:         stripe.Bool(true),
		Confirm:            stripe.Bool(true),
	}
	if req.Description != "" {
		params.Description = stripe.String(req.Description)
	}
	if req.IdempotencyKey != "" {
		params.SetIdempotencyKey(req.IdempotencyKey)
	}
	pi, err := p.client.V1PaymentIntents.Create(ctx, params)
	if err != nil {
		return Charge{}, chargeError(ctx, "charging "+req.PaymentMethodID, err)
	}
	switch pi.Status {
	case stripe.PaymentIntentStatusSucceeded:
	case stripe.PaymentIntentStatusProcessing:
		return Charge{ID: pi.ID, Amount: pi.Amount, Processing: true, IntentID: pi.ID}, nil
	case stripe.PaymentIntentStatusRequiresAction:
		return Charge{}, &ActionRequiredError{PaymentIntentID: pi.ID, ClientSecret: pi.ClientSecret}
	case stripe.PaymentIntentStatusRequiresPaymentMethod:
		return Charge{}, declineOf(pi.LastPaymentError)
	default:
		return Charge{}, fmt.Errorf("stripe: payment intent %s is %s", pi.ID, pi.Status)
	}
	id := pi.ID
	if pi.LatestCharge != nil && pi.LatestCharge.ID != "" {
		id = pi.LatestCharge.ID
	}
	return Charge{ID: id, Amount: pi.Amount}, nil
}

// stripeRefundReasons are the reasons Stripe accepts; a refund with any other reason is
// sent without one rather than refused, since Stripe uses the reason only to inform (and,
// for fraudulent, to block the card).
var stripeRefundReasons = map[string]bool{
	string(stripe.RefundReasonDuplicate):           true,
	string(stripe.RefundReasonFraudulent):          true,
	string(stripe.RefundReasonRequestedByCustomer): true,
}

// Refund implements Processor. req.ChargeID is what Charge returned: a charge (ch_…) or,
// when Stripe reported none, a PaymentIntent (pi_…), whose charge Stripe then refunds.
func (p *StripeProcessor) Refund(ctx context.Context, req RefundRequest) (Refund, error) {
	if req.Amount <= 0 {
		return Refund{}, fmt.Errorf("payment: refund of %d", req.Amount)
	}
	params := &stripe.RefundCreateParams{Amount: stripe.Int64(req.Amount)}
	if strings.HasPrefix(req.ChargeID, "pi_") {
		params.PaymentIntent = stripe.String(req.ChargeID)
	} else {
		params.Charge = stripe.String(req.ChargeID)
	}
	if stripeRefundReasons[req.Reason] {
		params.Reason = stripe.String(req.Reason)
	}
	if req.IdempotencyKey != "" {
		params.SetIdempotencyKey(req.IdempotencyKey)
	}
	r, err := p.client.V1Refunds.Create(ctx, params)
	if err != nil {
		if isInvalidRequest(err) {
			return Refund{}, refusalOf(err)
		}
		return Refund{}, stripeFault(ctx, "refunding "+req.ChargeID, err)
	}
	switch r.Status {
	case stripe.RefundStatusSucceeded:
		return Refund{ID: r.ID, Amount: r.Amount, Status: RefundSucceeded}, nil
	case stripe.RefundStatusPending, stripe.RefundStatusRequiresAction:
		return Refund{ID: r.ID, Amount: r.Amount, Status: RefundPending}, nil
	default:
		code := string(r.FailureReason)
		if code == "" {
			code = "refund_" + string(r.Status)
		}
		return Refund{}, &RefundError{Code: code, Message: fmt.Sprintf("Refund %s is %s.", r.ID, r.Status)}
	}
}
