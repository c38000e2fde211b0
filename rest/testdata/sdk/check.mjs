// Drives Till's /v1 with the published upstream SDK, unchanged, and fails on the first
// answer the SDK cannot decode or that differs from what the contract promises.
// Environment: TILL_URL, TILL_TOKEN (organization token), CUSTOMER_ID, EXTERNAL_ID.
import assert from "node:assert/strict";
import { Polar } from "@polar-sh/sdk";

const serverURL = process.env.TILL_URL;
const org = new Polar({ accessToken: process.env.TILL_TOKEN, serverURL });
const portal = new Polar({ serverURL });
const customerId = process.env.CUSTOMER_ID;
const externalId = process.env.EXTERNAL_ID;

async function rejects(promise, errorClass, check) {
  try {
    await promise;
  } catch (e) {
    assert.equal(e.constructor.name, errorClass, e.message);
    check?.(e);
    return;
  }
  assert.fail(`expected ${errorClass}`);
}

const page = await org.customers.listPaymentMethods({ id: customerId });
assert.equal(page.result.pagination.totalCount, 1);
const card = page.result.items[0];
assert.equal(card.methodMetadata.last4, "4242");
assert.equal(card.isDefault, false);
assert.ok(card.createdAt instanceof Date);

const byExternal = await org.customers.listPaymentMethodsExternal({ externalId });
assert.equal(byExternal.result.items[0].id, card.id);

const session = await org.customerSessions.create({ customerId });
assert.match(session.token, /^till_cst_/);
assert.equal(session.customer.id, customerId);
assert.ok(session.expiresAt instanceof Date);
const viaExternal = await org.customerSessions.create({ externalCustomerId: externalId });
assert.equal(viaExternal.customerId, customerId);

const auth = { customerSession: session.token };
const me = await portal.customerPortal.customers.update(auth, {
  billingName: "SDK Ltd", billingAddress: { country: "DE", city: "Berlin" }, taxId: "DE123456789",
});
assert.deepEqual(me.taxId, ["DE123456789", "eu_vat"]);
assert.equal(me.billingAddress.city, "Berlin");

const mine = await portal.customerPortal.customers.listPaymentMethods(auth, {});
assert.equal(mine.result.items[0].id, card.id);
const updated = await portal.customerPortal.customers.update(auth, { defaultPaymentMethodId: card.id });
assert.equal(updated.defaultPaymentMethodId, card.id);
const after = await org.customers.listPaymentMethods({ id: customerId });
assert.equal(after.result.items[0].isDefault, true);

await rejects(org.customers.listPaymentMethods({ id: "00000000-0000-4000-8000-000000000000" }), "ResourceNotFound");
await rejects(org.customerSessions.create({ customerId: "00000000-0000-4000-8000-000000000000" }), "HTTPValidationError",
  (e) => assert.equal(e.detail[0].msg, "Customer does not exist."));
await rejects(portal.customerPortal.customers.update(auth, { billingAddress: null }), "HTTPValidationError",
  (e) => assert.deepEqual(e.detail[0].loc, ["body", "billing_address"]));
await rejects(new Polar({ accessToken: "till_oat_unknown", serverURL }).customers.listPaymentMethods({ id: customerId }),
  "SDKError", (e) => assert.equal(e.statusCode, 401));

console.log("ok: 7 operations and 4 error paths decoded by @polar-sh/sdk");
