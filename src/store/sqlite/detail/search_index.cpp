#include "store/sqlite/detail/search_index.hpp"

#include <pthread.h>
#include <sched.h>

#include <algorithm>
#include <cerrno>
#include <filesystem>
#include <map>
#include <system_error>
#include <tuple>
#include <vector>

#include "core/log.hpp"
#include "core/thread_name.hpp"
#include "store/errors.hpp"

namespace posthorn::store::sqlite::detail {

namespace {

constexpr int kNiceIncrement = 15;             // background work, below the checkpointer's
constexpr int kBatch = 2048;                   // recipients (or inbound emails) read at a time
constexpr std::chrono::seconds kTailCheck{1};  // how often a wait for quiet measures the tail

// The index's schema. Contentless FTS5 tables (content=''): the text is not kept twice,
// only its trigrams; the documents' ids live in the *_docs tables, by the same rowid.
constexpr const char* kSchema = R"(
CREATE TABLE IF NOT EXISTS marks (name TEXT PRIMARY KEY, value INTEGER NOT NULL) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS accounts (no INTEGER PRIMARY KEY, account_id TEXT NOT NULL UNIQUE);
CREATE TABLE IF NOT EXISTS email_docs (rowid INTEGER PRIMARY KEY, account_no INTEGER NOT NULL,
                                       email_id TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS email_docs_account ON email_docs (account_no, rowid);
CREATE TABLE IF NOT EXISTS email_buckets (account_no INTEGER NOT NULL, level INTEGER NOT NULL,
    bucket INTEGER NOT NULL, n INTEGER NOT NULL, PRIMARY KEY (account_no, level, bucket))
    WITHOUT ROWID;
CREATE VIRTUAL TABLE IF NOT EXISTS email_text USING fts5(subject, recipients, sender, envelope,
    tokenize = 'trigram', content = '', columnsize = 0);
CREATE TABLE IF NOT EXISTS inbound_docs (rowid INTEGER PRIMARY KEY, account_no INTEGER NOT NULL,
                                         inbound_id TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS inbound_docs_account ON inbound_docs (account_no, rowid);
CREATE TABLE IF NOT EXISTS inbound_buckets (account_no INTEGER NOT NULL, level INTEGER NOT NULL,
    bucket INTEGER NOT NULL, n INTEGER NOT NULL, PRIMARY KEY (account_no, level, bucket))
    WITHOUT ROWID;
CREATE VIRTUAL TABLE IF NOT EXISTS inbound_text USING fts5(sender, recipient, subject,
    tokenize = 'trigram', content = '', columnsize = 0);
)";

Result<std::int64_t> scalar(Db& db, const char* sql, std::optional<std::int64_t> arg = {}) {
    using R = Result<std::int64_t>;
    auto s = db.prepare(sql);
    if (!s) return R(boost::system::in_place_error, s.error());
    if (arg) s->bind(1, *arg);
    auto row = s->step();
    if (!row) return R(boost::system::in_place_error, row.error());
    return R(*row && !s->is_null(0) ? s->int64(0) : 0);
}

Result<void> set_mark(Db& db, const char* name, std::int64_t value) {
    auto s = db.prepare(
        "INSERT INTO marks (name, value) VALUES (?1, ?2) "
        "ON CONFLICT (name) DO UPDATE SET value = ?2");
    if (!s) return s.error();
    return s->bind(1, std::string_view(name)).bind(2, value).run();
}

// A read transaction on the store, ended however the batch ends.
class ReadTxn {
  public:
    explicit ReadTxn(Db& db) : db_(db) { ok_ = static_cast<bool>(db_.run("BEGIN")); }
    ~ReadTxn() { (void)db_.run("COMMIT"); }
    bool ok() const { return ok_; }

  private:
    Db& db_;
    bool ok_ = false;
};

// Runs `write` in a write transaction of `db`: committed when it succeeds, rolled back
// otherwise.
template <class F>
Result<void> in_transaction(Db& db, F write) {
    if (auto r = db.run("BEGIN IMMEDIATE"); !r) return r.error();
    if (auto w = write(); !w) {
        (void)db.exec("ROLLBACK");
        return w.error();
    }
    if (auto r = db.run("COMMIT"); !r) {
        (void)db.exec("ROLLBACK");
        return r.error();
    }
    return {};
}

// The bucket counts of a batch of documents, added in the batch's transaction.
class BucketCounts {
  public:
    void add(std::int64_t account_no, std::int64_t created_at) {
        for (int level = 0; level < 4; ++level) {
            const auto ms = SearchIndex::kBucketMs[level];
            const auto q = created_at / ms;
            ++counts_[{account_no, level, created_at % ms < 0 ? q - 1 : q}];
        }
    }
    Result<void> write(Db& db, const char* table) const {
        auto s = db.prepare(std::string("INSERT INTO ") + table +
                            " (account_no, level, bucket, n) VALUES (?1, ?2, ?3, ?4) "
                            "ON CONFLICT (account_no, level, bucket) DO UPDATE SET n = n + ?4");
        if (!s) return s.error();
        for (const auto& [key, n] : counts_) {
            const auto& [account, level, bucket] = key;
            if (auto r = s->bind(1, account).bind(2, level).bind(3, bucket).bind(4, n).run(); !r)
                return r;
        }
        return {};
    }

  private:
    std::map<std::tuple<std::int64_t, int, std::int64_t>, std::int64_t> counts_;
};

// One email to index: its recipients' addresses and what its lists search.
struct EmailDoc {
    std::string account_id, email_id, subject, recipients, sender, envelope;
    std::int64_t created_at = 0;
};

}  // namespace

Result<std::unique_ptr<SearchIndex>> SearchIndex::open(const std::string& store_path) {
    const auto path = path_of(store_path);
    auto index = Db::open(path, true);
    if (!index) return index.error();
    auto version = scalar(*index, "PRAGMA user_version");
    if (!version) return version.error();
    if (*version != kVersion) {
        // Another version's (or a new, empty) file: built again from the store.
        if (*version != 0)
            log::info("store: rebuilding the search index {} (version {})", path, *version);
        { Db closed = std::move(*index); }
        std::error_code ec;
        for (const char* suffix : {"", "-wal", "-shm"}) std::filesystem::remove(path + suffix, ec);
        index = Db::open(path, true);
        if (!index) return index.error();
        if (auto r = index->exec(kSchema); !r) return r.error();
        const auto set_version = "PRAGMA user_version = " + std::to_string(kVersion);
        if (auto r = index->exec(set_version.c_str()); !r) return r.error();
    }
    auto store = Db::open(store_path, false);
    if (!store) return store.error();
    (void)store->exec("PRAGMA query_only=ON");
    return std::unique_ptr<SearchIndex>(new SearchIndex(std::move(*store), std::move(*index)));
}

SearchIndex::SearchIndex(Db store, Db index) : store_(std::move(store)), index_(std::move(index)) {}

SearchIndex::~SearchIndex() { stop(); }

void SearchIndex::start() {
    thread_ = std::thread([this] {
        core::name_this_thread("ph-search");
        // SCHED_IDLE: it runs on what every other thread leaves, and yields the moment one
        // of them wakes (a nice value of 15 still took a third of the CPU from sends in
        // bench/batch.sh). Failing that, a high nice value.
        const sched_param idle{};
        if (pthread_setschedparam(pthread_self(), SCHED_IDLE, &idle) != 0)
            if (const int err = core::raise_this_thread_nice(kNiceIncrement); err != 0)
                log::warn("store: lowering the search indexer's priority: {}",
                          std::generic_category().message(err));  // strerror: not thread-safe
        loop();
    });
}

void SearchIndex::stop() {
    {
        std::lock_guard lock(mutex_);
        stop_ = true;
    }
    cv_.notify_all();
    done_cv_.notify_all();
    if (thread_.joinable()) thread_.join();
}

void SearchIndex::poke() {
    bool first = false;
    {
        std::lock_guard lock(mutex_);
        first = !poked_;
        poked_ = true;
        last_poke_ = std::chrono::steady_clock::now();
    }
    if (first) cv_.notify_one();
}

bool SearchIndex::wait_caught_up(std::chrono::milliseconds limit) {
    std::unique_lock lock(mutex_);
    const auto mine = ++requested_;
    poked_ = true;
    cv_.notify_one();
    return done_cv_.wait_for(lock, limit, [&] { return completed_ >= mine || stop_; }) &&
           completed_ >= mine;
}

void SearchIndex::loop() {
    for (;;) {
        std::uint64_t asked = 0;
        {
            std::unique_lock lock(mutex_);
            cv_.wait_for(lock, std::chrono::seconds(1), [&] { return poked_ || stop_; });
            if (stop_) return;
        }
        if (!wait_for_quiet()) return;
        {
            std::lock_guard lock(mutex_);
            poked_ = false;
            asked = requested_;  // what a pass that ends with nothing left answers
        }
        bool failed = false;
        using Step = Result<Progress> (SearchIndex::*)();
        for (const Step step : {&SearchIndex::index_emails, &SearchIndex::index_inbound}) {
            for (;;) {
                {
                    std::lock_guard lock(mutex_);
                    if (stop_) return;
                }
                auto progress = (this->*step)();
                if (!progress) {
                    log::warn("store: search index: {}", progress.error().message());
                    failed = true;
                    break;
                }
                if (!progress->more) break;
            }
        }
        if (failed) continue;
        std::lock_guard lock(mutex_);
        completed_ = std::max(completed_, asked);
        done_cv_.notify_all();
    }
}

bool SearchIndex::wait_for_quiet() {
    auto last_check = std::chrono::steady_clock::now();
    for (;;) {
        {
            std::unique_lock lock(mutex_);
            const auto quiet_at = last_poke_ + kQuiet;
            cv_.wait_until(lock, std::min(quiet_at, last_check + kTailCheck),
                           [&] { return stop_ || requested_ > completed_; });
            if (stop_) return false;
            if (requested_ > completed_ || !poked_) return true;
            if (std::chrono::steady_clock::now() >= last_poke_ + kQuiet) return true;
        }
        if (std::chrono::steady_clock::now() - last_check >= kTailCheck) {
            last_check = std::chrono::steady_clock::now();
            auto mark = scalar(index_, "SELECT value FROM marks WHERE name = 'recipients'");
            auto top = scalar(store_, "SELECT max(id) FROM recipients");
            if (!mark || !top || *top - *mark >= kMaxTail) return true;
        }
    }
}

Result<std::int64_t> SearchIndex::account_no(const std::string& account_id) {
    auto find = index_.prepare("SELECT no FROM accounts WHERE account_id = ?1");
    if (!find) return find.error();
    find->bind(1, account_id);
    auto row = find->step();
    if (!row) return row.error();
    if (*row) return find->int64(0);
    auto add = index_.prepare("INSERT INTO accounts (account_id) VALUES (?1)");
    if (!add) return add.error();
    if (auto r = add->bind(1, account_id).run(); !r) return r.error();
    return index_.last_insert_rowid();
}

// The first free rowid of `created_at`'s millisecond in `table` (email_docs, inbound_docs).
Result<std::int64_t> SearchIndex::next_rowid(const char* table, std::int64_t created_at) {
    const auto first = rowid_at(created_at);
    const auto last = first + (std::int64_t{1} << kTieBits) - 1;
    auto s = index_.prepare(std::string("SELECT max(rowid) FROM ") + table +
                            " WHERE rowid BETWEEN ?1 AND ?2");
    if (!s) return s.error();
    s->bind(1, first).bind(2, last);
    auto row = s->step();
    if (!row) return row.error();
    if (s->is_null(0)) return first;
    if (s->int64(0) >= last) return errc::conflict;  // 4M documents in one millisecond
    return s->int64(0) + 1;
}

Result<SearchIndex::Progress> SearchIndex::index_emails() {
    std::vector<EmailDoc> docs;
    std::int64_t mark = 0, through = 0;
    bool full = false;
    {
        auto m = scalar(index_, "SELECT value FROM marks WHERE name = 'recipients'");
        if (!m) return m.error();
        mark = *m;
        ReadTxn txn(store_);
        if (!txn.ok()) return errc::io;
        auto top = scalar(store_, "SELECT max(id) FROM recipients");
        if (!top) return top.error();
        // The newest recipients were deleted (an account, by hand), and new ones may take
        // their ids again: follow the store down.
        if (*top < mark) mark = *top;
        through = mark;
        auto r = store_.prepare(
            "SELECT id, email_id, account_id, address FROM recipients WHERE id > ?1 "
            "ORDER BY id LIMIT ?2");
        if (!r) return r.error();
        r->bind(1, mark).bind(2, kBatch);
        struct Row {
            std::int64_t id;
            std::string email_id, account_id, address;
        };
        std::vector<Row> rows;
        for (;;) {
            auto row = r->step();
            if (!row) return row.error();
            if (!*row) break;
            rows.push_back({r->int64(0), r->text(1), r->text(2), r->text(3)});
        }
        full = rows.size() == static_cast<std::size_t>(kBatch);
        // An email's recipients are consecutive ids, written with it: whole emails only. A
        // full batch may end inside one, which waits for the next batch (unless it is the
        // only one: then all of its recipients are read by their range).
        std::size_t end = rows.size();
        if (full) {
            while (end > 0 && rows[end - 1].email_id == rows.back().email_id) --end;
            if (end == 0) end = rows.size();
        }
        for (std::size_t i = 0; i < end;) {
            std::size_t j = i;
            EmailDoc d{.account_id = rows[i].account_id, .email_id = rows[i].email_id};
            for (; j < end && rows[j].email_id == d.email_id; ++j)
                d.recipients += (d.recipients.empty() ? "" : "\n") + rows[j].address;
            through = rows[j - 1].id;
            auto e = store_.prepare(
                "SELECT subject, from_email, COALESCE(from_name, ''), COALESCE(envelope_id, ''), "
                "created_at, first_recipient_id, last_recipient_id FROM emails "
                "WHERE account_id = ?1 AND id = ?2");
            if (!e) return e.error();
            e->bind(1, d.account_id).bind(2, d.email_id);
            auto erow = e->step();
            if (!erow) return erow.error();
            if (*erow) {  // (an email deleted meanwhile is left out)
                d.subject = e->text(0);
                d.sender = e->text(1) + "\n" + e->text(2);
                d.envelope = e->text(3);
                d.created_at = e->int64(4);
                const auto last = e->int64(6);
                if (last > through) {  // the only email of a full batch, and longer than it
                    auto more = store_.prepare(
                        "SELECT address FROM recipients WHERE id > ?1 AND id <= ?2 "
                        "AND email_id = ?3 ORDER BY id");
                    if (!more) return more.error();
                    more->bind(1, through).bind(2, last).bind(3, d.email_id);
                    for (;;) {
                        auto mrow = more->step();
                        if (!mrow) return mrow.error();
                        if (!*mrow) break;
                        d.recipients += "\n" + more->text(0);
                    }
                    through = last;
                }
                docs.push_back(std::move(d));
            }
            i = j;
        }
    }
    if (through == mark && docs.empty()) return Progress{};
    std::sort(docs.begin(), docs.end(), [](const EmailDoc& a, const EmailDoc& b) {
        return std::tie(a.created_at, a.email_id) < std::tie(b.created_at, b.email_id);
    });
    auto write = [&]() -> Result<void> {
        auto doc = index_.prepare(
            "INSERT INTO email_docs (rowid, account_no, email_id) VALUES (?1, ?2, ?3)");
        if (!doc) return doc.error();
        auto text = index_.prepare(
            "INSERT INTO email_text (rowid, subject, recipients, sender, envelope) "
            "VALUES (?1, ?2, ?3, ?4, ?5)");
        if (!text) return text.error();
        BucketCounts buckets;
        for (const auto& d : docs) {
            auto no = account_no(d.account_id);
            if (!no) return no.error();
            buckets.add(*no, d.created_at);
            auto rowid = next_rowid("email_docs", d.created_at);
            if (!rowid) return rowid.error();
            if (auto r = doc->bind(1, *rowid).bind(2, *no).bind(3, d.email_id).run(); !r) return r;
            if (auto r = text->bind(1, *rowid)
                             .bind(2, d.subject)
                             .bind(3, d.recipients)
                             .bind(4, d.sender)
                             .bind(5, d.envelope)
                             .run();
                !r)
                return r;
        }
        if (auto r = buckets.write(index_, "email_buckets"); !r) return r;
        return set_mark(index_, "recipients", through);
    };
    if (auto r = in_transaction(index_, write); !r) return r.error();
    return Progress{.more = full};
}

Result<SearchIndex::Progress> SearchIndex::index_inbound() {
    struct InboundDoc {
        std::string account_id, id, sender, recipient, subject;
        std::int64_t received_at = 0;
    };
    std::vector<InboundDoc> docs;
    std::int64_t mark = 0, through = 0;
    {
        auto m = scalar(index_, "SELECT value FROM marks WHERE name = 'inbound'");
        if (!m) return m.error();
        mark = *m;
        ReadTxn txn(store_);
        if (!txn.ok()) return errc::io;
        auto top = scalar(store_, "SELECT max(rowid) FROM inbound_emails");
        if (!top) return top.error();
        if (*top < mark) mark = *top;
        through = mark;
        auto s = store_.prepare(
            "SELECT rowid, account_id, id, from_email, COALESCE(from_name, ''), to_address, "
            "subject, received_at FROM inbound_emails WHERE rowid > ?1 ORDER BY rowid LIMIT ?2");
        if (!s) return s.error();
        s->bind(1, mark).bind(2, kBatch);
        for (;;) {
            auto row = s->step();
            if (!row) return row.error();
            if (!*row) break;
            through = s->int64(0);
            docs.push_back({.account_id = s->text(1),
                            .id = s->text(2),
                            .sender = s->text(3) + "\n" + s->text(4),
                            .recipient = s->text(5),
                            .subject = s->text(6),
                            .received_at = s->int64(7)});
        }
    }
    if (through == mark) return Progress{};
    const bool full = docs.size() == static_cast<std::size_t>(kBatch);
    std::sort(docs.begin(), docs.end(), [](const InboundDoc& a, const InboundDoc& b) {
        return std::tie(a.received_at, a.id) < std::tie(b.received_at, b.id);
    });
    auto write = [&]() -> Result<void> {
        auto doc = index_.prepare(
            "INSERT INTO inbound_docs (rowid, account_no, inbound_id) VALUES (?1, ?2, ?3)");
        if (!doc) return doc.error();
        auto text = index_.prepare(
            "INSERT INTO inbound_text (rowid, sender, recipient, subject) VALUES (?1, ?2, ?3, ?4)");
        if (!text) return text.error();
        BucketCounts buckets;
        for (const auto& d : docs) {
            auto no = account_no(d.account_id);
            if (!no) return no.error();
            buckets.add(*no, d.received_at);
            auto rowid = next_rowid("inbound_docs", d.received_at);
            if (!rowid) return rowid.error();
            if (auto r = doc->bind(1, *rowid).bind(2, *no).bind(3, d.id).run(); !r) return r;
            if (auto r = text->bind(1, *rowid)
                             .bind(2, d.sender)
                             .bind(3, d.recipient)
                             .bind(4, d.subject)
                             .run();
                !r)
                return r;
        }
        if (auto r = buckets.write(index_, "inbound_buckets"); !r) return r;
        return set_mark(index_, "inbound", through);
    };
    if (auto r = in_transaction(index_, write); !r) return r.error();
    return Progress{.more = full};
}

Result<void> attach_search_index(Db& db, const std::string& store_path) {
    auto s = db.prepare("ATTACH DATABASE ?1 AS search");
    if (!s) return s.error();
    return s->bind(1, SearchIndex::path_of(store_path)).run();
}

}  // namespace posthorn::store::sqlite::detail
