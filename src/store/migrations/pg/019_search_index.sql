-- Version 19: the lists' search index leaves the send's transaction, as on SQLite (its
-- search indexer): a trigram index on emails cost every send about 40% of what the server
-- spends on the email (pgbench on this schema: 15.9k emails/s with it, 22-26k without), and
-- every update of an email that is not HOT (a delivery's status) wrote its trigrams again.
--
-- email_search holds what the lists search, with the trigram index. A send writes the same
-- columns into search_todo, a table without any index, and a node's search indexer (store/pg/
-- detail/search_indexer.hpp) moves waiting emails from search_todo into email_search, many a
-- statement. A search reads the index's matches in email_search and scans the few waiting
-- rows of search_todo: each email is in one of the two at any snapshot, so the answers are
-- the same whenever the indexer runs.

CREATE TABLE email_search (
    email_id             text COLLATE "C" PRIMARY KEY REFERENCES emails (id) ON DELETE CASCADE,
    account_id           text COLLATE "C" NOT NULL,
    subject              text COLLATE "C" NOT NULL,
    recipient_addresses  text COLLATE "C" NOT NULL,
    from_email           text COLLATE "C" NOT NULL,
    from_name            text COLLATE "C",
    envelope_id          text COLLATE "C" NOT NULL
);

-- One index (its key, by which the indexer takes rows: an id begins with its millisecond, so
-- new rows go to the index's right edge) and no foreign key: a send's row costs it little. A
-- row whose email is gone is dropped when it is taken.
CREATE TABLE search_todo (
    email_id             text COLLATE "C" PRIMARY KEY,
    account_id           text COLLATE "C" NOT NULL,
    subject              text COLLATE "C" NOT NULL,
    recipient_addresses  text COLLATE "C" NOT NULL,
    from_email           text COLLATE "C" NOT NULL,
    from_name            text COLLATE "C",
    envelope_id          text COLLATE "C" NOT NULL
);

-- The emails there are now, indexed at once (the index is built after its rows: faster).
INSERT INTO email_search (email_id, account_id, subject, recipient_addresses, from_email,
                          from_name, envelope_id)
SELECT id, account_id, subject, recipient_addresses, from_email, from_name, envelope_id
FROM emails;

DROP INDEX emails_search;
CREATE INDEX email_search_text ON email_search USING gin (
    subject gin_trgm_ops, recipient_addresses gin_trgm_ops, from_email gin_trgm_ops,
    from_name gin_trgm_ops, envelope_id gin_trgm_ops);
