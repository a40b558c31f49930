-- Version 19: API keys made over the API (issue 29): a name, a permission (`full` does all
-- its account may, `sending` only sends and reads what it sent), the domain a key may only
-- send from (NULL: any of its account's), and test mode (its mail never leaves). Keys made
-- before are full keys, unnamed, of no domain, live. What a permission allows is the
-- product's (domain/api_keys.hpp); the table only keeps it.
--
-- Each email keeps the key that sent it (NULL for mail from before), so that a sending key
-- reads the emails it sent and no others.

ALTER TABLE api_keys ADD COLUMN name TEXT NOT NULL DEFAULT '';
ALTER TABLE api_keys ADD COLUMN permission TEXT NOT NULL DEFAULT 'full'
    CHECK (permission IN ('full', 'sending'));
ALTER TABLE api_keys ADD COLUMN domain_id TEXT;
ALTER TABLE api_keys ADD COLUMN test INTEGER NOT NULL DEFAULT 0;

ALTER TABLE emails ADD COLUMN api_key_id TEXT;
