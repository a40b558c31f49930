// A libpq connection (CONVENTIONS §7: the RAII types of libpq, declared once), its statements
// prepared once by their text, and typed parameters and columns. Everything goes in
// PostgreSQL's binary format both ways: a parameter is its bytes with a length, never a
// NUL-terminated string, so a raw message (bytea) or a DKIM key travels byte for byte, and a
// number is never printed and parsed. One Conn is used by one thread at a time. Private to
// store/pg.
#pragma once

#include <libpq-fe.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <unordered_map>
#include <utility>
#include <vector>

#include "core/c_ptr.hpp"
#include "core/result.hpp"

namespace posthorn::store::pg::detail {

using ConnPtr = CPtr<PGconn, PQfinish>;
using ResultPtr = CPtr<PGresult, PQclear>;

// The type oids of pg_type.h (fixed in PostgreSQL's catalog since 7.x): libpq-dev does not
// ship the server's catalog headers.
enum class Type : Oid {
    boolean = 16,
    bytea = 17,
    int8 = 20,
    int2 = 21,
    int4 = 23,
    text = 25,
    varchar = 1043,
    bool_array = 1000,
    bytea_array = 1001,
    text_array = 1009,
    int8_array = 1016,
};

// The parameters of one statement, $1, $2 … in the order they are added. Text and bytes are
// not copied (what they view must outlive the statement's run), except a string given as an
// rvalue, which is kept. Numbers and arrays are encoded (copied).
class Params {
  public:
    Params& add(std::string_view v) { return view(Type::text, v); }
    Params& add(const std::string& v) { return view(Type::text, v); }
    Params& add(std::string&& v);
    Params& add(const char* v) { return view(Type::text, v); }  // not taken for a bool
    Params& add(std::int64_t v);
    Params& add(int v) { return add(static_cast<std::int64_t>(v)); }
    Params& add(bool v);
    Params& bytes(std::string_view v) { return view(Type::bytea, v); }
    Params& null(Type t);
    template <class T>
    Params& add(const std::optional<T>& v) {
        return v ? add(*v) : null(type_of<T>());
    }
    // Arrays (one dimension, from 1), for statements that take many rows at once
    // (INSERT … SELECT … FROM unnest($n::text[], …)): a row a position.
    Params& texts(const std::vector<std::string_view>& v);
    Params& texts(const std::vector<std::string>& v);
    Params& int8s(const std::vector<std::optional<std::int64_t>>& v);
    Params& int8s(const std::vector<std::int64_t>& v);
    Params& bools(const std::vector<bool>& v);
    Params& byteas(const std::vector<std::string_view>& v);

    // Adds `v` and answers its placeholder ("$3"), for SQL put together as it is bound.
    template <class T>
    std::string arg(T&& v) {
        add(std::forward<T>(v));
        return "$" + std::to_string(size());
    }

    int size() const { return static_cast<int>(items_.size()); }

  private:
    friend class Conn;
    // libpq's arrays of values, lengths and formats (binary) for the parameters.
    void encode(std::vector<const char*>& values, std::vector<int>& lengths,
                std::vector<int>& formats) const;
    struct Item {
        Type type;
        bool null = false;
        bool owns = false;      // its bytes are `owned`, not `view`
        std::string_view view;  // text, bytea
        std::string owned;      // an encoded number or array, a string kept
    };
    template <class T>
    static constexpr Type type_of() {
        if constexpr (std::is_same_v<T, bool>) return Type::boolean;
        if constexpr (std::is_integral_v<T>) return Type::int8;
        return Type::text;
    }
    Params& view(Type t, std::string_view v);
    Params& strings(Type element, Type array, const std::vector<std::string_view>& v);

    std::vector<Item> items_;
};

class Row {
  public:
    Row(const PGresult* r, int i) : r_(r), i_(i) {}
    bool is_null(int col) const { return PQgetisnull(r_, i_, col) != 0; }
    // int2, int4, int8 or boolean.
    std::int64_t int64(int col) const;
    int int32(int col) const { return static_cast<int>(int64(col)); }
    bool boolean(int col) const { return int64(col) != 0; }
    // text, varchar or bytea: the bytes as stored.
    std::string text(int col) const;
    std::optional<std::int64_t> opt_int64(int col) const {
        return is_null(col) ? std::nullopt : std::optional(int64(col));
    }
    std::optional<std::string> opt_text(int col) const {
        return is_null(col) ? std::nullopt : std::optional(text(col));
    }

  private:
    const PGresult* r_;
    int i_;
};

// The rows of a statement, in the binary format.
class Rows {
  public:
    explicit Rows(ResultPtr r) : r_(std::move(r)) {}
    int size() const { return PQntuples(r_.get()); }
    bool empty() const { return size() == 0; }
    Row row(int i) const { return Row(r_.get(), i); }
    // Each row made into a T by `read(const Row&)`, in order.
    template <class Read>
    auto map(Read read) const {
        std::vector<std::invoke_result_t<Read&, const Row&>> out;
        out.reserve(static_cast<std::size_t>(size()));
        for (int i = 0; i < size(); ++i) out.push_back(read(row(i)));
        return out;
    }
    // The rows an INSERT, UPDATE or DELETE touched.
    std::int64_t affected() const;

  private:
    ResultPtr r_;
};

// An error for a Result whose value type is bool (from which an error_code would convert).
template <class T>
Result<T> fail(error_code ec) {
    return Result<T>(boost::system::in_place_error, ec);
}

// The store's error for a failed statement: a unique violation is errc::conflict, a
// deadlock or serialization failure errc::busy (the statement may be run again), everything
// else errc::io.
error_code to_error(const char* sqlstate);

// The first line of a libpq message (they end in a newline, and some go on with a DETAIL).
std::string_view first_line(const char* message);

// A LIKE/ILIKE pattern for a substring (PostgreSQL's default escape is the backslash): % _ and
// the backslash are taken literally.
std::string like_pattern(std::string_view needle);

class Conn {
  public:
    // Connects (blocking) to `url`: a postgresql:// URI or a libpq key=value string. Client
    // encoding UTF8, application_name posthorn unless the URL names one, a 10 s connect
    // timeout unless it sets one. The error is logged, without the password.
    static Result<Conn> open(const std::string& url);

    Conn(Conn&&) noexcept = default;
    Conn& operator=(Conn&&) noexcept = default;
    ~Conn() = default;

    // Runs `sql` ($1 … for the parameters) as a statement prepared on this connection the
    // first time its text comes (the parameter types of that first call are its types).
    Result<Rows> exec(std::string_view sql, const Params& params = Params());
    // Runs statements without parameters through the simple protocol (BEGIN, COMMIT,
    // SAVEPOINT …; a migration's many statements at once).
    Result<void> run(const char* sql);

    // Pipelining (libpq's pipeline mode), for the writer: queue() sends a statement whose
    // rows nobody reads and does not wait for it, so that the statements of a batch go to the
    // server one after the other without a round trip each. Its outcome comes with sync():
    // the first failure of the statements queued since the last one. exec() after queue()
    // goes in the pipeline too, and one round trip brings the queued statements' outcome and
    // its rows; run() syncs first. Either fails with the first failure. Only while allowed
    // (allow_pipeline); otherwise queue() is exec() without the rows.
    error_code queue(std::string_view sql, const Params& params);
    error_code sync();
    void allow_pipeline(bool allowed) { pipeline_allowed_ = allowed; }
    bool pipeline_allowed() const { return pipeline_allowed_; }

    // Whether the connection is up (a failed statement may have found it gone).
    bool ok() const { return conn_ && PQstatus(conn_.get()) == CONNECTION_OK; }
    // Connects again (blocking), forgetting the prepared statements.
    Result<void> reconnect();
    // Keeps `up` told whether the server can be reached: false when a statement finds the
    // connection gone or a reconnect fails, true when a reconnect succeeds (the store's
    // StoreHealth::reachable()).
    void report_to(std::shared_ptr<std::atomic<bool>> up) { up_ = std::move(up); }
    PGconn* handle() const { return conn_.get(); }

  private:
    explicit Conn(ConnPtr c, std::string url) : conn_(std::move(c)), url_(std::move(url)) {}
    error_code failed(const PGresult* r, std::string_view sql);
    error_code send(std::string_view sql, const Params& params);
    // sync(), keeping the last command's result in `last` (when none failed).
    error_code sync(ResultPtr* last);

    void set_up(bool up) const {
        if (up_) up_->store(up);
    }

    // The name of the statement prepared for `sql`: prepared now (in the pipeline when
    // `pipelined`, its outcome then known at sync()) the first time.
    Result<const std::string*> statement(std::string_view sql, const Params& params,
                                         bool pipelined);
    static constexpr int kMaxQueued = 256;  // statements sent before a sync: a bound on
                                            // the results the server holds for us

    ConnPtr conn_;
    std::string url_;
    std::unordered_map<std::string, std::string> prepared_;  // text → statement name
    int statements_ = 0;  // statements prepared on the connection, for their names
    bool pipeline_allowed_ = false;
    int queued_ = 0;                      // statements in the pipeline since its last sync
    std::vector<std::string> pipelined_;  // texts prepared in it: forgotten if it fails
    std::string first_queued_;            // for the log, the first statement's text
    std::shared_ptr<std::atomic<bool>> up_;
};

}  // namespace posthorn::store::pg::detail
