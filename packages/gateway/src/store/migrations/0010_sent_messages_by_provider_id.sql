-- The platform's msg_id is looked up only for a delivery event that does not name our msg_id, and
-- only a message still waiting for its delivery (status sent) can take one. Indexing every message
-- ever sent put each send's id at a random place in an index as large as the store, which made
-- dispatch slower as the store grew; this index holds only the messages awaiting delivery.
DROP INDEX messages_by_provider_id;
CREATE INDEX messages_sent_by_provider_id ON messages (provider_msg_id) WHERE status = 'sent';
