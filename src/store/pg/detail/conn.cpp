#include "store/pg/detail/conn.hpp"

#include <array>
#include <cstdlib>
#include <cstring>

#include "core/log.hpp"
#include "store/errors.hpp"
#include "store/pg/pg_store.hpp"

namespace posthorn::store::pg::detail {
namespace {

void put_be(std::string& out, std::uint64_t v, int bytes) {
    for (int i = bytes - 1; i >= 0; --i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}

std::uint64_t get_be(const char* p, int bytes) {
    std::uint64_t v = 0;
    for (int i = 0; i < bytes; ++i) v = (v << 8) | static_cast<unsigned char>(p[i]);
    return v;
}

// An array of one dimension in the binary format (array_recv): the number of dimensions,
// whether any element is NULL, the element type, the length and lower bound of the one
// dimension, then each element as its length (-1: NULL) and its bytes.
std::string array_header(Type element, std::size_t n, bool any_null) {
    std::string out;
    put_be(out, n ? 1 : 0, 4);
    put_be(out, any_null ? 1 : 0, 4);
    put_be(out, static_cast<std::uint64_t>(element), 4);
    if (n) {
        put_be(out, n, 4);
        put_be(out, 1, 4);
    }
    return out;
}

}  // namespace

std::string_view first_line(const char* message) {
    std::string_view m = message ? message : "";
    return m.substr(0, m.find('\n'));
}

Params& Params::view(Type t, std::string_view v) {
    items_.push_back(Item{.type = t, .view = v});
    return *this;
}

Params& Params::add(std::string&& v) {
    items_.push_back(Item{.type = Type::text, .owns = true, .owned = std::move(v)});
    return *this;
}

Params& Params::add(std::int64_t v) {
    Item item{.type = Type::int8, .owns = true};
    put_be(item.owned, static_cast<std::uint64_t>(v), 8);
    items_.push_back(std::move(item));
    return *this;
}

Params& Params::add(bool v) {
    items_.push_back(
        Item{.type = Type::boolean, .owns = true, .owned = std::string(1, v ? '\1' : '\0')});
    return *this;
}

Params& Params::null(Type t) {
    items_.push_back(Item{.type = t, .null = true});
    return *this;
}

Params& Params::strings(Type element, Type array, const std::vector<std::string_view>& v) {
    Item item{.type = array, .owns = true, .owned = array_header(element, v.size(), false)};
    std::size_t size = item.owned.size();
    for (const auto s : v) size += 4 + s.size();
    item.owned.reserve(size);
    for (const auto s : v) {
        put_be(item.owned, s.size(), 4);
        item.owned.append(s);
    }
    items_.push_back(std::move(item));
    return *this;
}

Params& Params::texts(const std::vector<std::string_view>& v) {
    return strings(Type::text, Type::text_array, v);
}

Params& Params::byteas(const std::vector<std::string_view>& v) {
    return strings(Type::bytea, Type::bytea_array, v);
}

Params& Params::bools(const std::vector<bool>& v) {
    Item item{.type = Type::bool_array,
              .owns = true,
              .owned = array_header(Type::boolean, v.size(), false)};
    for (const bool x : v) {
        put_be(item.owned, 1, 4);
        item.owned.push_back(x ? '\1' : '\0');
    }
    items_.push_back(std::move(item));
    return *this;
}

Params& Params::texts(const std::vector<std::string>& v) {
    return texts(std::vector<std::string_view>(v.begin(), v.end()));
}

Params& Params::int8s(const std::vector<std::optional<std::int64_t>>& v) {
    bool any_null = false;
    for (const auto& x : v) any_null = any_null || !x;
    Item item{.type = Type::int8_array,
              .owns = true,
              .owned = array_header(Type::int8, v.size(), any_null)};
    for (const auto& x : v) {
        if (!x) {
            put_be(item.owned, 0xffffffffu, 4);  // -1: NULL
            continue;
        }
        put_be(item.owned, 8, 4);
        put_be(item.owned, static_cast<std::uint64_t>(*x), 8);
    }
    items_.push_back(std::move(item));
    return *this;
}

Params& Params::int8s(const std::vector<std::int64_t>& v) {
    return int8s(std::vector<std::optional<std::int64_t>>(v.begin(), v.end()));
}

std::int64_t Rows::affected() const {
    const char* n = PQcmdTuples(r_.get());
    return n && *n ? std::strtoll(n, nullptr, 10) : 0;
}

std::int64_t Row::int64(int col) const {
    const char* p = PQgetvalue(r_, i_, col);
    switch (static_cast<Type>(PQftype(r_, col))) {
        case Type::int8:
            return static_cast<std::int64_t>(get_be(p, 8));
        case Type::int4:
            return static_cast<std::int32_t>(get_be(p, 4));
        case Type::int2:
            return static_cast<std::int16_t>(get_be(p, 2));
        case Type::boolean:
            return p[0] != 0 ? 1 : 0;
        default:
            return 0;  // not a number: a bug in the statement, seen by its test
    }
}

std::string Row::text(int col) const {
    return std::string(PQgetvalue(r_, i_, col), static_cast<std::size_t>(PQgetlength(r_, i_, col)));
}

error_code to_error(const char* sqlstate) {
    const std::string_view s = sqlstate ? sqlstate : "";
    if (s == "23505") return errc::conflict;  // unique_violation
    // serialization_failure, deadlock_detected, lock_not_available
    if (s == "40001" || s == "40P01" || s == "55P03") return errc::busy;
    return errc::io;
}

std::string like_pattern(std::string_view needle) {
    std::string out = "%";
    for (const char c : needle) {
        if (c == '%' || c == '_' || c == '\\') out.push_back('\\');
        out.push_back(c);
    }
    return out + "%";
}

namespace {

// The server's notices (a NOTICE of CREATE … IF NOT EXISTS, the FATAL of a connection it
// terminates) go to the log, not to stderr as libpq's own processor sends them.
void notice(void* /*unused*/, const char* message) {
    log::debug("store: PostgreSQL says: {}", first_line(message));
}

ConnPtr connect_to(const std::string& url) {
    // Later entries override earlier ones (PQconnectdbParams with expand_dbname): the URL may
    // name its own application_name and connect_timeout; the encoding is ours.
    const bool has_timeout = url.find("connect_timeout") != std::string::npos;
    std::array<const char*, 5> keys{"application_name", "connect_timeout", "dbname",
                                    "client_encoding", nullptr};
    std::array<const char*, 5> values{"posthorn", "10", url.c_str(), "UTF8", nullptr};
    if (has_timeout) {  // the URL's own: leave it out of ours
        keys = {"application_name", "dbname", "client_encoding", nullptr, nullptr};
        values = {"posthorn", url.c_str(), "UTF8", nullptr, nullptr};
    }
    ConnPtr c(PQconnectdbParams(keys.data(), values.data(), 1));
    if (c) PQsetNoticeProcessor(c.get(), notice, nullptr);
    return c;
}

}  // namespace

Result<Conn> Conn::open(const std::string& url) {
    ConnPtr c = connect_to(url);
    if (!c || PQstatus(c.get()) != CONNECTION_OK) {
        log::error("store: cannot connect to PostgreSQL at {}: {}", redact_url(url),
                   first_line(c ? PQerrorMessage(c.get()) : "out of memory"));
        return errc::unavailable;
    }
    return Conn(std::move(c), url);
}

Result<void> Conn::reconnect() {
    prepared_.clear();
    ConnPtr c = connect_to(url_);
    if (!c || PQstatus(c.get()) != CONNECTION_OK) {
        log::warn("store: cannot connect to PostgreSQL at {}: {}", redact_url(url_),
                  first_line(c ? PQerrorMessage(c.get()) : "out of memory"));
        conn_ = std::move(c);
        set_up(false);
        return errc::unavailable;
    }
    conn_ = std::move(c);
    set_up(true);
    log::info("store: connected to PostgreSQL again");
    return {};
}

error_code Conn::failed(const PGresult* r, std::string_view sql) {
    const char* state = r ? PQresultErrorField(r, PG_DIAG_SQLSTATE) : nullptr;
    // A connection found gone: the server cannot be reached (nothing of the statement ran).
    if (!ok()) set_up(false);
    const auto ec = ok() ? to_error(state) : make_error_code(errc::unavailable);
    const char* primary = r ? PQresultErrorField(r, PG_DIAG_MESSAGE_PRIMARY) : nullptr;
    const auto message = first_line(primary ? primary : PQerrorMessage(conn_.get()));
    // A unique violation is an answer (errc::conflict), a deadlock is retried: not worth a
    // warning. The statement's text is cut short: it names no values (they are parameters).
    if (ec == errc::conflict || ec == errc::busy)
        log::debug("store: {} ({}): {}", message, state ? state : "", sql.substr(0, 120));
    else
        log::warn("store: {} ({}): {}", message, state ? state : "", sql.substr(0, 120));
    return ec;
}

void Params::encode(std::vector<const char*>& values, std::vector<int>& lengths,
                    std::vector<int>& formats) const {
    values.reserve(items_.size());
    lengths.reserve(items_.size());
    formats.reserve(items_.size());
    for (const auto& p : items_) {
        // Zero-length text still needs a non-null pointer: null means SQL NULL.
        const std::string_view bytes = p.owns ? std::string_view(p.owned) : p.view;
        values.push_back(p.null ? nullptr : (bytes.data() ? bytes.data() : ""));
        lengths.push_back(static_cast<int>(bytes.size()));
        formats.push_back(1);
    }
}

Result<const std::string*> Conn::statement(std::string_view sql, const Params& params,
                                           bool pipelined) {
    auto it = prepared_.find(std::string(sql));
    if (it != prepared_.end()) return &it->second;
    std::vector<Oid> types;
    types.reserve(params.items_.size());
    for (const auto& p : params.items_) types.push_back(static_cast<Oid>(p.type));
    // Never a name used before on this connection: a statement forgotten after a failed
    // pipeline may still exist on the server under its old name.
    const auto name = "s" + std::to_string(++statements_);
    const std::string text(sql);
    if (pipelined) {
        if (PQsendPrepare(conn_.get(), name.c_str(), text.c_str(), params.size(), types.data()) !=
            1)
            return failed(nullptr, sql);
        ++queued_;
        pipelined_.push_back(text);
    } else {
        ResultPtr r(
            PQprepare(conn_.get(), name.c_str(), text.c_str(), params.size(), types.data()));
        if (!r || PQresultStatus(r.get()) != PGRES_COMMAND_OK) return failed(r.get(), sql);
    }
    return &prepared_.emplace(text, name).first->second;
}

Result<Rows> Conn::exec(std::string_view sql, const Params& params) {
    if (!conn_) return errc::unavailable;
    // Statements queued before: this one goes after them in the pipeline, and one round trip
    // brings their outcome and its rows.
    if (PQpipelineStatus(conn_.get()) != PQ_PIPELINE_OFF) {
        if (auto ec = send(sql, params)) {
            (void)sync();
            return ec;
        }
        ResultPtr last;
        if (auto ec = sync(&last)) return ec;
        if (!last) return failed(nullptr, sql);
        return Rows(std::move(last));
    }
    auto name = statement(sql, params, false);
    if (!name) return name.error();
    const int n = params.size();
    std::vector<const char*> values;
    std::vector<int> lengths, formats;
    params.encode(values, lengths, formats);
    ResultPtr r(PQexecPrepared(conn_.get(), (*name)->c_str(), n, values.data(), lengths.data(),
                               formats.data(), 1));
    const auto status = r ? PQresultStatus(r.get()) : PGRES_FATAL_ERROR;
    if (status != PGRES_TUPLES_OK && status != PGRES_COMMAND_OK) return failed(r.get(), sql);
    return Rows(std::move(r));
}

error_code Conn::queue(std::string_view sql, const Params& params) {
    if (!conn_) return errc::unavailable;
    if (!pipeline_allowed_) return exec(sql, params).error();
    if (auto ec = send(sql, params)) return ec;
    if (queued_ >= kMaxQueued) return sync();
    return {};
}

// Sends `sql` into the pipeline (entered if it is not yet), without waiting.
error_code Conn::send(std::string_view sql, const Params& params) {
    if (PQpipelineStatus(conn_.get()) == PQ_PIPELINE_OFF && PQenterPipelineMode(conn_.get()) != 1)
        return failed(nullptr, sql);
    if (queued_ == 0) first_queued_ = std::string(sql.substr(0, 120));
    auto name = statement(sql, params, true);
    if (!name) return name.error();
    std::vector<const char*> values;
    std::vector<int> lengths, formats;
    params.encode(values, lengths, formats);
    if (PQsendQueryPrepared(conn_.get(), (*name)->c_str(), params.size(), values.data(),
                            lengths.data(), formats.data(), 1) != 1)
        return failed(nullptr, sql);
    ++queued_;
    return {};
}

error_code Conn::sync() { return sync(nullptr); }

error_code Conn::sync(ResultPtr* last) {
    if (!conn_ || PQpipelineStatus(conn_.get()) == PQ_PIPELINE_OFF) return {};
    error_code first;
    const int commands = queued_;
    queued_ = 0;
    if (PQpipelineSync(conn_.get()) != 1) {
        first = failed(nullptr, first_queued_);
    } else {
        // Each command's results end with a null; the sync point's result comes last.
        for (int done = 0; done <= commands;) {
            ResultPtr r(PQgetResult(conn_.get()));
            if (!r) {
                if (!ok()) break;
                ++done;
                continue;
            }
            const auto status = PQresultStatus(r.get());
            if (status == PGRES_PIPELINE_SYNC) break;
            if (status == PGRES_FATAL_ERROR && !first) {
                first = failed(r.get(), first_queued_);
            } else if (status == PGRES_PIPELINE_ABORTED && !first) {
                first = make_error_code(errc::io);
            } else if (last && (status == PGRES_TUPLES_OK || status == PGRES_COMMAND_OK)) {
                *last = std::move(r);  // the last command's, once all have come
            }
        }
        if (!ok() && !first) first = failed(nullptr, first_queued_);
    }
    if (ok()) (void)PQexitPipelineMode(conn_.get());
    // A statement prepared in a failed pipeline may not exist on the server.
    if (first)
        for (const auto& text : pipelined_) prepared_.erase(text);
    pipelined_.clear();
    return first;
}

Result<void> Conn::run(const char* sql) {
    if (!conn_) return errc::unavailable;
    if (auto ec = sync()) return ec;
    ResultPtr r(PQexec(conn_.get(), sql));
    const auto status = r ? PQresultStatus(r.get()) : PGRES_FATAL_ERROR;
    if (status != PGRES_TUPLES_OK && status != PGRES_COMMAND_OK) return failed(r.get(), sql);
    return {};
}

}  // namespace posthorn::store::pg::detail
