// store/copy.hpp — moving an install from one back end to another (`posthorn store copy`,
// docs/postgresql.md "Moving an install from SQLite"): the tables that hold state, each as
// columns of a few plain kinds, parents before children; a source that reads them out of
// one store and a target that writes them into another, a row at a time, streaming; and
// the copy itself, which refuses a target that holds any row, and compares the rows of every
// table on both sides before it commits.
//
// Plumbing, not product: a row is copied as it is stored; nothing here knows what a status
// means. What a back end derives from its rows is not in the format, each side keeps its
// own: SQLite's search index, per-account counts and queue/outbox marks, PostgreSQL's
// indexes and an email's `recipient_addresses`. Per-node runtime state is left out: job
// leases, and the leases on recipients and webhook deliveries (a copied queue is claimable
// by any node).
//
// The source and the target are interfaces because the two back ends' drivers may not meet
// in one file (tools/check_layers.py: SQLite under store/sqlite/, libpq under store/pg/):
// sqlite/sqlite_copy_source.hpp reads, pg/pg_copy_target.hpp writes.
//
// Blocking, for a CLI command; not thread-safe: one copy on one thread.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.hpp"

namespace posthorn::store {

// What a column holds. `names` is a list of short words (a webhook's event names).
enum class CopyKind : std::uint8_t { integer, boolean, text, bytes, names };

struct CopyColumn {
    std::string_view name;
    CopyKind kind;
};

struct CopyTable {
    std::string_view name;
    std::vector<CopyColumn> columns;
};

// Every table that holds state, in an order their foreign keys allow (parents first). The
// names are PostgreSQL's, the schema every later back end is written after.
const std::vector<CopyTable>& copy_tables();

// Takes one table's rows: the cells of a row in the order of the table's columns (null()
// for a missing value), then end_row().
class RowSink {
  public:
    virtual ~RowSink() = default;
    virtual void null() = 0;
    virtual void integer(std::int64_t v) = 0;
    virtual void boolean(bool v) = 0;
    virtual void text(std::string_view v) = 0;
    virtual void bytes(std::string_view v) = 0;
    virtual void names(const std::vector<std::string_view>& v) = 0;
    // The row is complete; an error (a value the target cannot hold, a lost connection)
    // ends the copy.
    virtual Result<void> end_row() = 0;
};

// A store read out: every read and count of one source sees one snapshot of it.
class CopySource {
  public:
    virtual ~CopySource() = default;
    // Hands every row of `table` to `sink`.
    virtual Result<void> read(const CopyTable& table, RowSink& sink) = 0;
    // The rows of `table` that read() hands over.
    virtual Result<std::int64_t> count(const CopyTable& table) = 0;
};

// A store written in one transaction: nothing of the copy is seen, or kept, until commit().
class CopyTarget {
  public:
    virtual ~CopyTarget() = default;
    // Opens the transaction, keeps other writers off `tables` until it ends, and checks that
    // the target has them with columns that can take their kinds.
    virtual Result<void> begin(const std::vector<CopyTable>& tables) = 0;
    virtual Result<bool> has_rows(const CopyTable& table) = 0;
    // Starts writing `table`: its rows go to the sink answered, which lives until
    // finish_table().
    virtual Result<RowSink*> start_table(const CopyTable& table) = 0;
    // Ends the table's rows; answers how many were written.
    virtual Result<std::int64_t> finish_table() = 0;
    virtual Result<std::int64_t> count(const CopyTable& table) = 0;
    virtual Result<void> commit() = 0;
    // Undoes everything since begin() (also in the middle of a table).
    virtual void rollback() = 0;
};

struct TableCount {
    std::string table;
    std::int64_t source = 0;
    std::int64_t target = 0;
};

struct CopyReport {
    enum class Outcome {
        copied,            // committed: every table's counts match
        target_not_empty,  // nothing written; `tables`: the target's tables that hold rows
        counts_differ,     // rolled back; `tables`: every table, with both counts
    };
    Outcome outcome = Outcome::copied;
    std::vector<TableCount> tables;
};

// Called after each table is written, with the rows written.
using CopyProgress = std::function<void(std::string_view table, std::int64_t rows)>;

// Copies every table of copy_tables() from `from` into `to`, in one transaction of the
// target: refused (nothing written) when the target holds a row in any of them; committed
// only when, afterwards, every table holds as many rows in the target as in the source. A
// failure (an error answered) leaves the target as it was.
Result<CopyReport> copy_store(CopySource& from, CopyTarget& to, const CopyProgress& progress = {});

}  // namespace posthorn::store
