-- Version 2: the accepted sends of each account per second (SendRateStore, store.hpp): the
-- send rate counted across every node on this database (api/rate_limiter.hpp). A node adds
-- to them under a transaction-scoped advisory lock per account; rows older than the window
-- are dropped as the account's counts are added to.

CREATE TABLE send_counts (
    account_id  text COLLATE "C" NOT NULL,
    second      bigint NOT NULL,
    n           bigint NOT NULL,
    PRIMARY KEY (account_id, second)
);
