-- Version 28: the account's statistics (GET /v1/stats, issue 31; docs/api.md "GET
-- /v1/stats"). One row per account, dimension, UTC hour and kind, counting emails: the
-- dimension is '' (every email of the account), 'domain:<domain id>' or
-- 'tag:<name>:<value>', the kind a name of domain::StatKind ('accepted', 'delivered',
-- 'bounced.hard', …). Which rows an email's acceptance and changes add to is the domain's
-- (domain/stats.hpp); the store adds NewEmail::stats and EmailChange::stats in the
-- transaction that writes them. A question is a range of the key: an account's dimension,
-- between two hours. (Number 28 is another change's.)

CREATE TABLE stat_counters (
    account_id  TEXT NOT NULL,
    dimension   TEXT NOT NULL,
    hour        INTEGER NOT NULL,
    kind        TEXT NOT NULL,
    count       INTEGER NOT NULL,
    PRIMARY KEY (account_id, dimension, hour, kind)
) WITHOUT ROWID;

-- The emails stored before this version, counted once from what their rows say (the same
-- rules as domain/stats.hpp, as far as a row keeps them): accepted at created_at, delivered at
-- delivered_at; bounced (by the class of the first bounced recipient), failed or blocked at
-- failed_at for an email of that status now; complained at updated_at for a COMPLAINED one;
-- opened and clicked at opened_at and clicked_at. An email that was delivered and then
-- bounced or complained about counts both, as it would have been counted as it happened.
CREATE TEMP TABLE stat_facts AS
SELECT id, account_id, domain_id, kind, at FROM (
    SELECT id, account_id, domain_id, 'accepted' AS kind, created_at AS at FROM emails
    UNION ALL
    SELECT id, account_id, domain_id, 'delivered', delivered_at FROM emails
     WHERE delivered_at IS NOT NULL
    UNION ALL
    -- An email's recipients are the ids first_recipient_id..last_recipient_id (010).
    SELECT e.id, e.account_id, e.domain_id,
           'bounced.' || COALESCE((SELECT r.bounce_type FROM recipients r
                                    WHERE r.id BETWEEN e.first_recipient_id
                                                   AND e.last_recipient_id
                                      AND r.email_id = e.id AND r.status = 'BOUNCED'
                                    ORDER BY r.id LIMIT 1), 'undetermined'),
           e.failed_at
      FROM emails e WHERE e.status = 'BOUNCED' AND e.failed_at IS NOT NULL
    UNION ALL
    SELECT id, account_id, domain_id, 'failed', failed_at FROM emails
     WHERE status = 'FAILED' AND failed_at IS NOT NULL
    UNION ALL
    SELECT id, account_id, domain_id, 'blocked', failed_at FROM emails
     WHERE status = 'BLOCKED' AND failed_at IS NOT NULL
    UNION ALL
    SELECT id, account_id, domain_id, 'complained', updated_at FROM emails
     WHERE status = 'COMPLAINED'
    UNION ALL
    SELECT id, account_id, domain_id, 'opened', opened_at FROM emails
     WHERE opened_at IS NOT NULL
    UNION ALL
    SELECT id, account_id, domain_id, 'clicked', clicked_at FROM emails
     WHERE clicked_at IS NOT NULL);
-- The tags' counters read each tag's email through this index (email_tags is keyed by tag).
CREATE INDEX temp.stat_facts_email ON stat_facts (account_id, id);

INSERT INTO stat_counters (account_id, dimension, hour, kind, count)
SELECT account_id, dimension, hour, kind, COUNT(*)
  FROM (SELECT account_id, '' AS dimension, (at / 3600000) * 3600000 AS hour, kind
          FROM stat_facts
        UNION ALL
        SELECT account_id, 'domain:' || domain_id, (at / 3600000) * 3600000, kind
          FROM stat_facts WHERE domain_id IS NOT NULL AND domain_id <> ''
        UNION ALL
        SELECT f.account_id, 'tag:' || t.name || ':' || t.value, (f.at / 3600000) * 3600000,
               f.kind
          FROM email_tags t CROSS JOIN stat_facts f
            ON f.account_id = t.account_id AND f.id = t.email_id)
 GROUP BY account_id, dimension, hour, kind;

DROP TABLE temp.stat_facts;
