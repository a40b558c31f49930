#include "store/sqlite/sqlite_copy_source.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <map>
#include <system_error>

#include "core/log.hpp"
#include "store/errors.hpp"
#include "store/sqlite/detail/db.hpp"
#include "store/sqlite/detail/migrations.hpp"

namespace posthorn::store::sqlite {

using detail::Db;
using detail::Stmt;

namespace {

// Each table of copy_tables() as this schema (the last migration's) holds it: the columns in
// the order of the table's, by their order of insertion (ids for the tables keyed by them).
const std::map<std::string_view, const char*, std::less<>>& selects() {
    static const std::map<std::string_view, const char*, std::less<>> kSelects = {
        {"accounts", "SELECT id, name, created_at FROM accounts ORDER BY rowid"},
        {"api_keys",
         "SELECT id, account_id, prefix, hash, created_at, revoked_at, name, permission, "
         "domain_id, test FROM api_keys ORDER BY rowid"},
        {"domains",
         "SELECT id, account_id, name, status, token, sending, inbound, open_tracking, "
         "click_tracking, records, first_verify_at, last_checked_at, next_check_at, "
         "verified_at, created_at, updated_at, dkim_selector, dkim_pending, dkim_rotated_at, "
         "tracking_label, return_path_label, return_path_verified "
         "FROM domains ORDER BY rowid"},
        {"dkim_keys",
         "SELECT id, domain_id, selector, private_key, public_key, active, created_at "
         "FROM dkim_keys ORDER BY rowid"},
        // The recipients' addresses (NULL here) are read by addresses_of(), from the range of
        // recipient ids the row holds (the last three columns, after the table's).
        {"emails",
         "SELECT e.id, e.account_id, NULLIF(e.domain_id, ''), COALESCE(e.envelope_id, ''), "
         "e.status, e.from_email, e.from_name, e.to_display, e.subject, e.message_id, "
         "e.return_token, NULL, e.track_opens, e.track_clicks, e.source, e.size_bytes, "
         "e.total_recipients, e.created_at, e.queued_at, e.sent_at, e.delivered_at, "
         "e.failed_at, e.opened_at, e.clicked_at, e.updated_at, COALESCE(b.raw, X''), "
         "e.api_key_id, e.tags, e.metadata, e.test, e.return_path, e.scheduled_at, "
         "e.first_recipient_id, "
         "e.last_recipient_id "
         "FROM emails e LEFT JOIN email_bodies b ON b.id = e.body_id ORDER BY e.account_id, e.id"},
        // A recipient never tried has no next_attempt_at (migration 012): it is due since its
        // email was queued, as email_where() reads it and as PostgreSQL stores it.
        {"recipients",
         "SELECT r.id, r.email_id, r.account_id, r.address, r.domain, r.type, r.status, "
         "r.attempts, CASE WHEN r.next_attempt_at IS NULL AND r.status = 'QUEUED' "
         "THEN e.queued_at ELSE r.next_attempt_at END, r.last_response, r.sent_at, r.final_at, "
         "r.bounce_type, r.bounce_code, r.bounce_message, r.updated_at, r.tls_policy, "
         "r.tls_version, r.tls_verified, r.tls_failure, r.held_at FROM recipients r "
         "LEFT JOIN emails e ON e.account_id = r.account_id AND e.id = r.email_id ORDER BY r.id"},
        {"email_tags",
         "SELECT account_id, name, value, email_id FROM email_tags "
         "ORDER BY account_id, name, value, email_id"},
        {"suppressions",
         "SELECT account_id, address, reason, source_email_id, created_at FROM suppressions "
         "ORDER BY account_id, address"},
        {"idempotency_keys",
         "SELECT account_id, key, COALESCE(email_id, ''), response_status, response_body, "
         "created_at, expires_at FROM idempotency_keys ORDER BY account_id, key"},
        // Events at or below the mark have their deliveries written (migration 013).
        {"events",
         "SELECT rowid, id, account_id, type, email_id, data, created_at, rowid <= COALESCE("
         "(SELECT routed_through FROM event_routing WHERE id = 1), 0) FROM events "
         "ORDER BY rowid"},
        // The events column is a JSON array of names; json_each reads it back in order, as
        // one space-separated string (names have no spaces), as the store does.
        {"webhooks",
         "SELECT w.id, w.account_id, w.url, (SELECT group_concat(value, ' ') FROM "
         "json_each(w.events)), w.active, w.secret, w.created_at, w.updated_at, "
         "w.previous_secret, w.previous_secret_until FROM webhooks w "
         "ORDER BY w.rowid"},
        {"webhook_deliveries",
         "SELECT id, webhook_id, event_id, state, attempts, next_attempt_at, created_at "
         "FROM webhook_deliveries ORDER BY id"},
        {"webhook_attempts",
         "SELECT id, delivery_id, attempt, status_code, error, duration_ms, created_at "
         "FROM webhook_attempts ORDER BY id"},
        {"request_logs",
         "SELECT account_id, created_at, id, method, url, status, duration_ms, ip, user_agent, "
         "session FROM request_logs ORDER BY account_id, created_at, id"},
        {"inbound_emails",
         "SELECT id, account_id, NULLIF(domain_id, ''), from_email, from_name, to_address, "
         "subject, reply_to, cc, bcc, raw, received_at, authentication FROM inbound_emails "
         "ORDER BY rowid"},
        {"inbound_attachments",
         "SELECT inbound_id, idx, filename, content_type, size, content_id "
         "FROM inbound_attachments ORDER BY inbound_id, idx"},
        {"templates",
         "SELECT id, account_id, name, subject, html, text, variables, created_at, updated_at "
         "FROM templates ORDER BY rowid"},
        {"stat_counters",
         "SELECT account_id, dimension, hour, kind, count FROM stat_counters "
         "ORDER BY account_id, dimension, hour, kind"},
    };
    return kSelects;
}

// Whether another process has the database open: each connection to a WAL database holds a
// shared lock on byte 128 of its -shm file (the "DMS" lock, walformat.html §2.3.1) while it
// is open. No -shm file: nobody has it open (the last connection to close removes it).
Result<bool> open_elsewhere(const std::string& path) {
    const std::string shm = path + "-shm";
    const int fd = ::open(shm.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return false;
    struct flock lock {};
    lock.l_type = F_WRLCK;
    lock.l_whence = SEEK_SET;
    lock.l_start = 128;
    lock.l_len = 1;
    const int rc = ::fcntl(fd, F_GETLK, &lock);
    const int err = errno;
    ::close(fd);
    if (rc != 0) {
        log::error("store copy: cannot check the locks of {}: {}", shm,
                   std::generic_category().message(err));
        return errc::io;
    }
    return lock.l_type != F_UNLCK;
}

Result<int> user_version(Db& db) {
    auto s = db.prepare("PRAGMA user_version");
    if (!s) return s.error();
    auto row = s->step();
    if (!row) return row.error();
    return static_cast<int>(*row ? s->int64(0) : 0);
}

}  // namespace

struct SqliteCopySource::Impl {
    Db db;
    int version = 0;
};

SqliteCopySource::SqliteCopySource(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

SqliteCopySource::~SqliteCopySource() { (void)impl_->db.exec("ROLLBACK"); }

int SqliteCopySource::schema_version() const { return impl_->version; }

Result<std::unique_ptr<SqliteCopySource>> SqliteCopySource::open(const std::string& path) {
    auto elsewhere = open_elsewhere(path);
    if (!elsewhere) return elsewhere.error();
    if (*elsewhere) {
        log::error(
            "store copy: another process has {} open (a posthorn serving on it?): stop it "
            "first",
            path);
        return errc::busy;
    }
    auto db = Db::open_read_only(path);
    if (!db) return db.error();
    // One snapshot for every read and count: the transaction stays open until the end.
    if (auto r = db->exec("BEGIN"); !r) return r.error();
    auto version = user_version(*db);
    if (!version) return version.error();
    const int known = detail::migrations().back().version;
    if (*version == 0) {
        log::error("store copy: {} is not a posthorn store (its schema version is 0)", path);
        return errc::io;
    }
    if (*version != known) {
        log::error("store copy: {} is at schema version {}, this posthorn's is {}", path, *version,
                   known);
        return *version > known ? errc::newer_schema : errc::older_schema;
    }
    auto impl = std::make_unique<Impl>(Impl{.db = std::move(*db), .version = *version});
    return std::unique_ptr<SqliteCopySource>(new SqliteCopySource(std::move(impl)));
}

namespace {

// An email's recipients' addresses, one a line, in the order of their ids (as PostgreSQL's
// insert_email() makes them).
Result<void> addresses_of(Db& db, const Stmt& email, int first_col, std::string& out) {
    out.clear();
    if (email.is_null(first_col)) return {};
    auto r = db.prepare(
        "SELECT address FROM recipients WHERE id BETWEEN ?1 AND ?2 AND email_id = ?3 "
        "ORDER BY id");
    if (!r) return r.error();
    r->bind(1, email.int64(first_col))
        .bind(2, email.int64(first_col + 1))
        .bind_ref(3, email.view(0));
    for (;;) {
        auto row = r->step();
        if (!row) return row.error();
        if (!*row) return {};
        if (!out.empty()) out += '\n';
        out += r->view(0);
    }
}

void split_names(std::string_view s, std::vector<std::string_view>& out) {
    out.clear();
    while (!s.empty()) {
        const auto end = s.find(' ');
        if (end != 0) out.push_back(s.substr(0, end));
        if (end == std::string_view::npos) break;
        s.remove_prefix(end + 1);
    }
}

}  // namespace

Result<void> SqliteCopySource::read(const CopyTable& table, RowSink& sink) {
    const auto it = selects().find(table.name);
    if (it == selects().end()) {
        log::error("store copy: no way to read table {} from SQLite", table.name);
        return errc::io;
    }
    Db& db = impl_->db;
    auto s = db.prepare(it->second);
    if (!s) return s.error();
    const int columns = static_cast<int>(table.columns.size());
    if (s->column_count() < columns) {
        log::error("store copy: the SQLite read of {} has {} columns, the table {}", table.name,
                   s->column_count(), columns);
        return errc::io;
    }
    const bool emails = table.name == "emails";
    std::string addresses;
    std::vector<std::string_view> names;
    for (;;) {
        auto row = s->step();
        if (!row) return row.error();
        if (!*row) return {};
        for (int c = 0; c < columns; ++c) {
            const auto& col = table.columns[static_cast<std::size_t>(c)];
            if (emails && col.name == "recipient_addresses") {
                if (auto r = addresses_of(db, *s, columns, addresses); !r) return r;
                sink.text(addresses);
                continue;
            }
            if (s->is_null(c) && col.kind != CopyKind::names) {
                sink.null();
                continue;
            }
            switch (col.kind) {
                case CopyKind::integer:
                    sink.integer(s->int64(c));
                    break;
                case CopyKind::boolean:
                    sink.boolean(s->int64(c) != 0);
                    break;
                case CopyKind::text:
                    sink.text(s->view(c));
                    break;
                case CopyKind::bytes:
                    sink.bytes(s->view(c));
                    break;
                case CopyKind::names:
                    split_names(s->view(c), names);
                    sink.names(names);
                    break;
            }
        }
        if (auto r = sink.end_row(); !r) return r;
    }
}

Result<std::int64_t> SqliteCopySource::count(const CopyTable& table) {
    if (selects().find(table.name) == selects().end()) return errc::io;
    // The name is one of copy_tables()', never the user's.
    auto s = impl_->db.prepare("SELECT count(*) FROM " + std::string(table.name));
    if (!s) return s.error();
    auto row = s->step();
    if (!row) return row.error();
    return s->int64(0);
}

}  // namespace posthorn::store::sqlite
