-- Nothing changes on SQLite: its index of messages by recipient (0014) already holds the creation
-- time and the id after the number's last two digits.
SELECT 1;
