#include "store/pg/pg_copy_target.hpp"

#include <cstdlib>
#include <limits>
#include <map>

#include "core/log.hpp"
#include "store/errors.hpp"
#include "store/pg/detail/conn.hpp"
#include "store/pg/detail/migrations.hpp"

namespace posthorn::store::pg {

using detail::Conn;
using detail::Params;
using detail::ResultPtr;
using detail::Type;

namespace {

// Sent to the server when this much of a table's rows has gathered: few calls and packets,
// bounded memory (a row larger than this, a big message, goes on its own).
constexpr std::size_t kChunk = std::size_t{1} << 20;

// The binary COPY format (COPY's documentation, "Binary Format"): the signature, 32 bits of
// flags and 32 of header extension length; then each row as its number of fields (16 bits)
// and each field as its length (32 bits, -1 for NULL) and its bytes in the type's binary
// form (the form of the types' *_send functions, as the statements' parameters); then -1.
constexpr std::string_view kHeader{"PGCOPY\n\377\r\n\0\0\0\0\0\0\0\0\0", 19};

void put_be(std::string& out, std::uint64_t v, int bytes) {
    for (int i = bytes - 1; i >= 0; --i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}

std::string quoted(std::string_view identifier) {  // copy_tables()' names: no quote in them
    return "\"" + std::string(identifier) + "\"";
}

bool takes(CopyKind kind, Type type) {
    switch (kind) {
        case CopyKind::integer:
            return type == Type::int8 || type == Type::int4 || type == Type::int2;
        case CopyKind::boolean:
            return type == Type::boolean;
        case CopyKind::text:
            return type == Type::text || type == Type::varchar;
        case CopyKind::bytes:
            return type == Type::bytea;
        case CopyKind::names:
            return type == Type::text_array;
    }
    return false;
}

// What the server said about a failed statement: its message and where (a COPY's table,
// row and column). The detail is shown only for a key that is missing or taken (names ids);
// others ("Failing row contains …") would print a row, webhook secrets and all.
void log_failure(const PGresult* r, PGconn* conn, std::string_view what) {
    const char* primary = r ? PQresultErrorField(r, PG_DIAG_MESSAGE_PRIMARY) : nullptr;
    const char* detail = r ? PQresultErrorField(r, PG_DIAG_MESSAGE_DETAIL) : nullptr;
    const char* context = r ? PQresultErrorField(r, PG_DIAG_CONTEXT) : nullptr;
    std::string text(detail::first_line(primary ? primary : PQerrorMessage(conn)));
    if (detail && std::string_view(detail).substr(0, 5) == "Key (")
        text += " (" + std::string(detail::first_line(detail)) + ")";
    if (context) text += "; " + std::string(detail::first_line(context));
    log::error("store copy: {}: {}", what, text);
}

// One table's rows in the binary COPY format, gathered in a buffer and sent in chunks.
class CopySink final : public RowSink {
  public:
    void start(PGconn* conn, const CopyTable* table, const std::vector<Type>* types) {
        conn_ = conn;
        table_ = table;
        types_ = types;
        col_ = 0;
        failed_ = false;
        buf_.assign(kHeader);
    }

    void null() override {
        if (cell()) put_be(buf_, 0xffffffffu, 4);
    }
    void integer(std::int64_t v) override {
        if (!cell()) return;
        const auto t = type();
        const int width = t == Type::int8 ? 8 : t == Type::int4 ? 4 : t == Type::int2 ? 2 : 0;
        if (width == 0) return wrong("an integer");
        const auto bound = std::int64_t{1} << (8 * width - 1);
        if (width < 8 && (v < -bound || v >= bound)) return wrong("an integer out of its range");
        put_be(buf_, static_cast<std::uint64_t>(width), 4);
        put_be(buf_, static_cast<std::uint64_t>(v), width);
    }
    void boolean(bool v) override {
        if (!cell()) return;
        if (type() != Type::boolean) return wrong("a boolean");
        put_be(buf_, 1, 4);
        buf_.push_back(v ? '\1' : '\0');
    }
    void text(std::string_view v) override {
        if (!cell()) return;
        if (type() != Type::text && type() != Type::varchar) return wrong("text");
        field(v);
    }
    void bytes(std::string_view v) override {
        if (!cell()) return;
        if (type() != Type::bytea) return wrong("bytes");
        field(v);
    }
    // A text[] of one dimension (array_send): dimensions, whether any is NULL, the element
    // type, then the length and lower bound (1) of the dimension and each element; an empty
    // array has no dimension.
    void names(const std::vector<std::string_view>& v) override {
        if (!cell()) return;
        if (type() != Type::text_array) return wrong("a list of names");
        std::size_t length = v.empty() ? 12 : 20;
        for (const auto s : v) length += 4 + s.size();
        put_be(buf_, length, 4);
        put_be(buf_, v.empty() ? 0 : 1, 4);
        put_be(buf_, 0, 4);
        put_be(buf_, static_cast<std::uint64_t>(Type::text), 4);
        if (!v.empty()) {
            put_be(buf_, v.size(), 4);
            put_be(buf_, 1, 4);
        }
        for (const auto s : v) {
            put_be(buf_, s.size(), 4);
            buf_.append(s);
        }
    }
    Result<void> end_row() override {
        if (!failed_ && col_ != types_->size()) wrong("a row of another number of cells");
        if (failed_) return errc::io;
        col_ = 0;
        if (buf_.size() >= kChunk) return send();
        return {};
    }

    // The end of the rows, sent.
    Result<void> finish() {
        put_be(buf_, 0xffffu, 2);
        return send();
    }

  private:
    // Starts a cell (and the row at its first); false once the row went wrong.
    bool cell() {
        if (failed_) return false;
        if (col_ >= types_->size()) {
            wrong("a row of more cells");
            return false;
        }
        if (col_ == 0) put_be(buf_, types_->size(), 2);
        ++col_;
        return true;
    }
    Type type() const { return (*types_)[col_ - 1]; }
    void field(std::string_view v) {
        if (v.size() > std::numeric_limits<std::int32_t>::max()) return wrong("a value over 2 GB");
        put_be(buf_, v.size(), 4);
        buf_.append(v);
    }
    // A source that hands what the column does not take: a bug, or a value PostgreSQL
    // cannot hold; the copy ends at the end of the row.
    void wrong(std::string_view what) {
        if (!failed_)
            log::error("store copy: {}.{} cannot take {}", table_->name,
                       col_ > 0 ? table_->columns[col_ - 1].name : "?", what);
        failed_ = true;
    }
    Result<void> send() {
        if (PQputCopyData(conn_, buf_.data(), static_cast<int>(buf_.size())) != 1) {
            log::error("store copy: {}: sending rows: {}", table_->name,
                       detail::first_line(PQerrorMessage(conn_)));
            return errc::unavailable;
        }
        buf_.clear();
        return {};
    }

    PGconn* conn_ = nullptr;
    const CopyTable* table_ = nullptr;
    const std::vector<Type>* types_ = nullptr;
    std::size_t col_ = 0;
    bool failed_ = false;
    std::string buf_;
};

struct Identity {
    std::string table;
    std::string column;
};

}  // namespace

struct PgCopyTarget::Impl {
    explicit Impl(Conn c) : conn(std::move(c)) {}
    Conn conn;
    std::map<std::string, std::vector<Type>, std::less<>> types;  // of each table's columns
    std::vector<Identity> identities;  // copied identity columns, their sequences to move
    std::vector<std::string> tables;
    bool in_transaction = false;
    bool in_copy = false;
    std::string copying;
    CopySink sink;

    Result<void> columns_of(const CopyTable& table);
    Result<std::int64_t> end_copy();
};

PgCopyTarget::PgCopyTarget(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

PgCopyTarget::~PgCopyTarget() { rollback(); }

Result<std::unique_ptr<PgCopyTarget>> PgCopyTarget::open(const std::string& url) {
    auto conn = Conn::open(url);
    if (!conn) return conn.error();
    // As a store's open: the same migrations under the same advisory lock.
    auto version = detail::migrate(*conn, detail::migrations());
    if (!version) return version.error();
    return std::unique_ptr<PgCopyTarget>(
        new PgCopyTarget(std::make_unique<Impl>(std::move(*conn))));
}

// The types of the columns the copy writes into `table`, checked against their kinds.
Result<void> PgCopyTarget::Impl::columns_of(const CopyTable& table) {
    auto rows = conn.exec(
        "SELECT a.attname::text, a.atttypid::int8, a.attidentity <> '' FROM pg_attribute a "
        "WHERE a.attrelid = to_regclass($1) AND a.attnum > 0 AND NOT a.attisdropped",
        Params().add(table.name));
    if (!rows) return rows.error();
    if (rows->empty()) {
        log::error("store copy: the target has no table {}", table.name);
        return errc::io;
    }
    std::vector<Type> out;
    for (const auto& col : table.columns) {
        int found = -1;
        for (int i = 0; i < rows->size() && found < 0; ++i)
            if (rows->row(i).text(0) == col.name) found = i;
        if (found < 0) {
            log::error("store copy: the target's table {} has no column {}", table.name, col.name);
            return errc::io;
        }
        const auto r = rows->row(found);
        const auto type = static_cast<Type>(r.int64(1));
        if (!takes(col.kind, type)) {
            log::error("store copy: the target's column {}.{} (type {}) cannot take it", table.name,
                       col.name, r.int64(1));
            return errc::io;
        }
        out.push_back(type);
        if (r.boolean(2))
            identities.push_back({.table = std::string(table.name), .column = r.text(0)});
    }
    types.insert_or_assign(std::string(table.name), std::move(out));
    return {};
}

Result<void> PgCopyTarget::begin(const std::vector<CopyTable>& tables) {
    if (auto r = impl_->conn.run("BEGIN"); !r) return r;
    impl_->in_transaction = true;
    // Writers on these tables (a node, a second copy) wait for the end of the copy; a second
    // copy then finds the tables full and is refused.
    std::string lock = "LOCK TABLE ";
    for (const auto& t : tables) {
        lock += (impl_->tables.empty() ? "" : ", ") + quoted(t.name);
        impl_->tables.push_back(quoted(t.name));
    }
    lock += " IN EXCLUSIVE MODE";
    if (auto r = impl_->conn.run(lock.c_str()); !r) return r;
    for (const auto& t : tables)
        if (auto r = impl_->columns_of(t); !r) return r;
    return {};
}

Result<bool> PgCopyTarget::has_rows(const CopyTable& table) {
    auto rows = impl_->conn.exec("SELECT EXISTS (SELECT 1 FROM " + quoted(table.name) + ")");
    using R = Result<bool>;  // a bool and an error code would be ambiguous
    if (!rows) return R(boost::system::in_place_error, rows.error());
    return R(rows->row(0).boolean(0));
}

Result<std::int64_t> PgCopyTarget::count(const CopyTable& table) {
    auto rows = impl_->conn.exec("SELECT count(*) FROM " + quoted(table.name));
    if (!rows) return rows.error();
    return rows->row(0).int64(0);
}

Result<RowSink*> PgCopyTarget::start_table(const CopyTable& table) {
    const auto types = impl_->types.find(table.name);
    if (types == impl_->types.end()) return errc::io;  // not one begin() was given
    std::string sql = "COPY " + quoted(table.name) + " (";
    for (std::size_t i = 0; i < table.columns.size(); ++i)
        sql += (i ? ", " : "") + quoted(table.columns[i].name);
    sql += ") FROM STDIN (FORMAT binary)";
    PGconn* conn = impl_->conn.handle();
    ResultPtr r(PQexec(conn, sql.c_str()));
    if (!r || PQresultStatus(r.get()) != PGRES_COPY_IN) {
        log_failure(r.get(), conn, table.name);
        return errc::io;
    }
    impl_->in_copy = true;
    impl_->copying = std::string(table.name);
    impl_->sink.start(conn, &table, &types->second);
    return &impl_->sink;
}

// Ends the COPY under way (its rows sent), and answers the rows the server took.
Result<std::int64_t> PgCopyTarget::Impl::end_copy() {
    PGconn* c = conn.handle();
    in_copy = false;
    if (PQputCopyEnd(c, nullptr) != 1) {
        log::error("store copy: {}: {}", copying, detail::first_line(PQerrorMessage(c)));
        return errc::unavailable;
    }
    Result<std::int64_t> rows = errc::io;
    for (ResultPtr r(PQgetResult(c)); r; r.reset(PQgetResult(c))) {
        if (PQresultStatus(r.get()) == PGRES_COMMAND_OK) {
            rows = std::strtoll(PQcmdTuples(r.get()), nullptr, 10);
        } else {
            log_failure(r.get(), c, copying);
            rows = errc::io;
        }
    }
    return rows;
}

Result<std::int64_t> PgCopyTarget::finish_table() {
    if (auto r = impl_->sink.finish(); !r) return r.error();
    return impl_->end_copy();
}

Result<void> PgCopyTarget::commit() {
    // The lists' search index (migration 19) of the emails copied, in the copy's transaction
    // (the store's indexer would take them one batch at a time).
    if (auto r = impl_->conn.run(
            "INSERT INTO email_search (email_id, account_id, subject, recipient_addresses, "
            "from_email, from_name, envelope_id) SELECT id, account_id, subject, "
            "recipient_addresses, from_email, from_name, envelope_id FROM emails "
            "ON CONFLICT (email_id) DO NOTHING");
        !r) {
        rollback();
        return r;
    }
    // The ids were copied as they were: new rows number on from the largest.
    for (const auto& id : impl_->identities) {
        const auto sql = "SELECT setval(pg_get_serial_sequence('" + quoted(id.table) + "', '" +
                         id.column + "'), coalesce(max(" + quoted(id.column) + "), 0) + 1, " +
                         "false) FROM " + quoted(id.table);
        if (auto r = impl_->conn.run(sql.c_str()); !r) {
            rollback();
            return r;
        }
    }
    impl_->in_transaction = false;
    if (auto r = impl_->conn.run("COMMIT"); !r) return r;
    std::string analyze = "ANALYZE ";
    for (std::size_t i = 0; i < impl_->tables.size(); ++i)
        analyze += (i ? ", " : "") + impl_->tables[i];
    if (auto r = impl_->conn.run(analyze.c_str()); !r)
        log::warn("store copy: ANALYZE failed (autovacuum does it later): {}", r.error().message());
    return {};
}

void PgCopyTarget::rollback() {
    PGconn* c = impl_->conn.handle();
    if (impl_->in_copy) {
        impl_->in_copy = false;
        // The server fails the COPY with this message; its results are read and dropped.
        if (PQputCopyEnd(c, "posthorn store copy stopped") == 1)
            for (ResultPtr r(PQgetResult(c)); r; r.reset(PQgetResult(c))) {
            }
    }
    if (impl_->in_transaction) {
        impl_->in_transaction = false;
        (void)impl_->conn.run("ROLLBACK");
    }
}

}  // namespace posthorn::store::pg
