-- Template sync: templates learned from the platform (GET /template/all + /template/info/v2).

-- Whose price the template carries. 'operator': registered or updated by the operator (their VND
-- price wins and sync never touches it). 'platform': first seen through sync, priced at the
-- platform's price, which later syncs keep up to date until the operator sets a price.
ALTER TABLE templates ADD COLUMN price_source text NOT NULL DEFAULT 'operator' CHECK (price_source IN ('operator', 'platform'));
-- When the platform's view of the template (name, status, params, preview) was last applied;
-- null for a template the platform never reported (or the operator changed since).
ALTER TABLE templates ADD COLUMN synced_at bigint;
