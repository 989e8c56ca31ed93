-- An idempotency record keeps what its request did (an acceptance's result, a cancelled message's
-- id) as data, and the response is built from it on every answer. Records written before keep the
-- response they answered with, so their columns become optional; they expire within 24 hours.
ALTER TABLE idempotency_records ADD COLUMN result text;
ALTER TABLE idempotency_records ALTER COLUMN status_code DROP NOT NULL;
ALTER TABLE idempotency_records ALTER COLUMN response_body DROP NOT NULL;
