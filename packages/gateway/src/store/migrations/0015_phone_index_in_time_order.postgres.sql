-- PostgreSQL's index of messages by recipient now holds the creation time after the number. Keyed
-- by the number alone, a page of one number's messages read every message it ever received from the
-- table and sorted them: on a store grown to 5,000,000 messages, 208 table pages for a number with
-- 208 messages, and the read grew with the number's history. In time order, the newest page reads
-- the index backwards and fetches the page's rows only. The index is larger (a number's entries no
-- longer share one key), as its siblings by template and sender account already are.
DROP INDEX messages_by_workspace_phone;
CREATE INDEX messages_by_workspace_phone ON messages (workspace_id, phone, created_at);
