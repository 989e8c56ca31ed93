-- Phones and template data are erased from finished messages after TMS_MESSAGE_RETENTION_DAYS
-- (template_data becomes the JSON text 'null': the column stays NOT NULL, so no table rebuild).
-- This index holds only the messages that still carry them, oldest first: the retention sweep
-- reads from its start, and erased messages leave it, so a round never walks the erased history.
-- New messages go on its last page (created_at grows), which keeps acceptance cheap.
CREATE INDEX messages_holding_personal_data ON messages (created_at) WHERE template_data <> 'null';
