-- Nothing changes on SQLite: its text columns already compare byte by byte (the BINARY collation,
-- its default). PostgreSQL's now do too, whatever the database's own collation (0016's PostgreSQL file).
SELECT 1;
