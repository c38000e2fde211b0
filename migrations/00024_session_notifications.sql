-- +goose Up
-- A serving process keeps the customer and member sessions it has resolved, with their
-- customer, so that a portal page does not look its session up again on every request. Any
-- change that could alter what such a lookup answers notifies till_sessions when it commits,
-- and every process then forgets every session it holds. The triggers are per statement:
-- the payload is empty and PostgreSQL folds a transaction's equal notifications into one,
-- so a bulk change notifies once. Inserts change no existing session's answer and notify
-- nobody. The channel name is storage's (storage.SessionsChannel).
CREATE TRIGGER customer_sessions_changed AFTER UPDATE OR DELETE ON customer_sessions
    FOR EACH STATEMENT EXECUTE FUNCTION till_notify('till_sessions');
CREATE TRIGGER member_sessions_changed AFTER UPDATE OR DELETE ON member_sessions
    FOR EACH STATEMENT EXECUTE FUNCTION till_notify('till_sessions');
-- A session carries its customer as the portal shows it, so every change of a customer counts.
CREATE TRIGGER customers_changed AFTER UPDATE OR DELETE ON customers
    FOR EACH STATEMENT EXECUTE FUNCTION till_notify('till_sessions');
-- A member session carries the member's role.
CREATE TRIGGER members_changed AFTER UPDATE OR DELETE ON members
    FOR EACH STATEMENT EXECUTE FUNCTION till_notify('till_sessions');
-- Only the deletion of an organization ends its sessions; the invoice and receipt counters
-- that every order moves must not empty the caches.
CREATE TRIGGER organizations_deleted AFTER UPDATE OF deleted_at OR DELETE ON organizations
    FOR EACH STATEMENT EXECUTE FUNCTION till_notify('till_sessions');

-- +goose Down
DROP TRIGGER organizations_deleted ON organizations;
DROP TRIGGER members_changed ON members;
DROP TRIGGER customers_changed ON customers;
DROP TRIGGER member_sessions_changed ON member_sessions;
DROP TRIGGER customer_sessions_changed ON customer_sessions;
