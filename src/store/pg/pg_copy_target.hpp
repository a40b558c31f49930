// store/pg/pg_copy_target.hpp — a PostgreSQL database written by `posthorn store copy`
// (store/copy.hpp).
//
// open() connects and migrates the database as PgStore::open() does (the same migrations,
// under the same advisory lock), so that a fresh database gets posthorn's schema and one of a
// newer schema is refused (errc::newer_schema). The copy then runs in one transaction: begin()
// takes EXCLUSIVE locks on the tables (a node or a second copy that would write waits, reads
// go on) and checks each column the copy writes exists with a type that takes its kind; each
// table's rows stream in through `COPY … FROM STDIN (FORMAT binary)`, sent in chunks of about
// 1 MiB, so a row costs no round trip; commit() moves each identity column's sequence (the
// ids of recipients, events' seq, webhook deliveries and attempts were copied as they were)
// past the largest id copied, so that new rows number on from there, then commits, then
// ANALYZEs the tables so that the planner knows their sizes from the first query.
//
// Errors the server reports (a constraint, a value it cannot take) are logged with their
// message and context; the URL is only ever logged redacted (redact_url).
//
// Not thread-safe: one thread.
#pragma once

#include <memory>
#include <string>

#include "store/copy.hpp"

namespace posthorn::store::pg {

class PgCopyTarget final : public CopyTarget {
  public:
    static Result<std::unique_ptr<PgCopyTarget>> open(const std::string& url);
    ~PgCopyTarget() override;
    PgCopyTarget(const PgCopyTarget&) = delete;
    PgCopyTarget& operator=(const PgCopyTarget&) = delete;

    Result<void> begin(const std::vector<CopyTable>& tables) override;
    Result<bool> has_rows(const CopyTable& table) override;
    Result<RowSink*> start_table(const CopyTable& table) override;
    Result<std::int64_t> finish_table() override;
    Result<std::int64_t> count(const CopyTable& table) override;
    Result<void> commit() override;
    void rollback() override;

  private:
    struct Impl;
    explicit PgCopyTarget(std::unique_ptr<Impl> impl);
    std::unique_ptr<Impl> impl_;
};

}  // namespace posthorn::store::pg
