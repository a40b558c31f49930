#include "store/pg/detail/search_indexer.hpp"

#include "core/log.hpp"
#include "core/thread_name.hpp"

namespace posthorn::store::pg::detail {

SearchIndexer::SearchIndexer(Conn conn, std::function<bool()> quiet, std::int64_t max_backlog)
    : conn_(std::move(conn)), quiet_(std::move(quiet)), max_backlog_(max_backlog) {}

SearchIndexer::~SearchIndexer() { stop(); }

void SearchIndexer::start() {
    thread_ = std::thread([this] {
        core::name_this_thread("ph-pg-search");
        loop();
    });
}

void SearchIndexer::stop() {
    {
        std::lock_guard lock(mutex_);
        stop_ = true;
    }
    cv_.notify_all();
    if (thread_.joinable()) thread_.join();
}

Result<std::int64_t> SearchIndexer::index_all() {
    std::lock_guard lock(conn_mutex_);
    std::int64_t taken = 0;
    for (;;) {
        auto n = index_batch();
        if (!n) return n.error();
        taken += *n;
        if (*n < kBatch) return taken;
    }
}

void SearchIndexer::loop() {
    auto last_check = std::chrono::steady_clock::now();
    bool failing = false;
    for (;;) {
        {
            std::unique_lock lock(mutex_);
            cv_.wait_for(lock, kPoll, [this] { return stop_.load(); });
            if (stop_) return;
        }
        std::lock_guard lock(conn_mutex_);
        Result<bool> due(quiet_());
        if (!*due && std::chrono::steady_clock::now() - last_check >= kBacklogCheck) {
            last_check = std::chrono::steady_clock::now();
            due = backlog_full();
        }
        Result<std::int64_t> taken = std::int64_t{0};
        if (due && *due) taken = drain();
        const error_code ec = !due ? due.error() : !taken ? taken.error() : error_code{};
        // One warning a spell of failures (the server down: every pass fails until it is back).
        if (ec && !failing) log::warn("store: search indexer: {}", ec.message());
        failing = static_cast<bool>(ec);
    }
}

Result<std::int64_t> SearchIndexer::drain() {
    std::int64_t taken = 0;
    while (!stop_) {
        auto n = index_batch();
        if (!n) return n.error();
        taken += *n;
        if (*n < kBatch) break;
    }
    return taken;
}

Result<bool> SearchIndexer::backlog_full() {
    if (!conn_.ok())
        if (auto r = conn_.reconnect(); !r) return fail<bool>(r.error());
    auto rows = conn_.exec("SELECT count(*) FROM (SELECT 1 FROM search_todo LIMIT $1) w",
                           Params().add(max_backlog_));
    if (!rows) return fail<bool>(rows.error());
    return rows->row(0).int64(0) >= max_backlog_;
}

Result<std::int64_t> SearchIndexer::index_batch() {
    if (!conn_.ok())
        if (auto r = conn_.reconnect(); !r) return r.error();
    // Taken and indexed in one statement (one transaction): a search sees an email waiting or
    // indexed, never both, never neither. An email gone meanwhile is dropped with its row. The
    // forms are the ones whose plans stay on the keys' indexes whatever the tables' statistics
    // say (= ANY (ARRAY(…)) and a LATERAL … LIMIT 1: a plan of IN and EXISTS, on a new table's
    // statistics, scanned search_todo and emails whole for each batch).
    auto rows = conn_.exec(
        "WITH taken AS (DELETE FROM search_todo WHERE email_id = ANY (ARRAY(SELECT email_id "
        "FROM search_todo ORDER BY email_id LIMIT $1 FOR UPDATE SKIP LOCKED)) RETURNING *), "
        "indexed AS (INSERT INTO email_search (email_id, account_id, subject, "
        "recipient_addresses, from_email, from_name, envelope_id) "
        "SELECT t.email_id, t.account_id, t.subject, t.recipient_addresses, t.from_email, "
        "t.from_name, t.envelope_id FROM taken t, "
        "LATERAL (SELECT 1 FROM emails e WHERE e.id = t.email_id LIMIT 1) e "
        "ORDER BY t.email_id ON CONFLICT (email_id) DO NOTHING) "
        "SELECT count(*) FROM taken",
        Params().add(kBatch));
    if (!rows) return rows.error();
    return rows->row(0).int64(0);
}

}  // namespace posthorn::store::pg::detail
