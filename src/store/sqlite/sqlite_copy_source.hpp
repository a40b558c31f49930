// store/sqlite/sqlite_copy_source.hpp — a SQLite store read out for `posthorn store copy`
// (store/copy.hpp).
//
// The file is opened read-only and never migrated: a store of another schema version than
// this build's is refused (errc::older_schema, errc::newer_schema), and so is one that
// another process has open (errc::busy: a posthorn serving on it, or a CLI command; SQLite
// in WAL mode holds a shared lock on the "DMS" byte of the -shm file for every open
// connection, https://www.sqlite.org/walformat.html §2.3.1, which this looks for). Every
// read and count runs in one read transaction, one snapshot, from open to the end.
//
// The rows come out in the shape of copy_tables(): an email with its message (email_bodies)
// and its recipients' addresses, one a line; a recipient never tried (no next_attempt_at
// since migration 012) due at its email's queued_at, as the store reads it; an event
// `routed` when it is at or below event_routing's mark (migration 013); no leases. What the
// store derives (request_log_counts, email_counts, inbound_counts, queue_state, the search
// index file) is not read.
//
// Not thread-safe: one thread.
#pragma once

#include <memory>
#include <string>

#include "store/copy.hpp"

namespace posthorn::store::sqlite {

class SqliteCopySource final : public CopySource {
  public:
    static Result<std::unique_ptr<SqliteCopySource>> open(const std::string& path);
    ~SqliteCopySource() override;
    SqliteCopySource(const SqliteCopySource&) = delete;
    SqliteCopySource& operator=(const SqliteCopySource&) = delete;

    Result<void> read(const CopyTable& table, RowSink& sink) override;
    Result<std::int64_t> count(const CopyTable& table) override;

    // The schema version the file is at (that of this build, once open).
    int schema_version() const;

  private:
    struct Impl;
    explicit SqliteCopySource(std::unique_ptr<Impl> impl);
    std::unique_ptr<Impl> impl_;
};

}  // namespace posthorn::store::sqlite
