// Gathered WAL writes: a SQLite VFS that is the default one, except that each WAL file's
// consecutive writes are gathered in memory and written with one call.
//
// SQLite writes a WAL frame with two calls (its 24-byte header, then its page): ~35 write
// calls for a commit of a few sends at half load, ~70 at full load, each a system call
// that walks the page cache (a 4120-byte frame straddles two pages, each written twice).
// Gathered, a commit is one write call per 124 KB (the unix VFS writes at most 128 KB - 1
// in one call): the writer's system time at half load fell by a quarter (bench/RESULTS.md).
//
// What makes it safe: SQLite makes a commit visible to other connections (the wal-index)
// only after it synced the WAL (synchronous=FULL, set by Db::open), and every sync writes
// out what was gathered first. So do a read, a truncate, a size query, a file control and
// a close, so that nothing reads a file older than what SQLite wrote. A failed write is
// reported by the call that made it (the sync of the commit: the commit fails and is
// rolled back, no send is acknowledged). Other files (the database, its shared memory,
// journals) are the default VFS's own.
#pragma once

namespace posthorn::store::sqlite::detail {

// The VFS's name, for sqlite3_open_v2; registered (not as the default) at the first call.
// Its files are opened by whatever VFS is the default at the time.
const char* gathered_wal_vfs();

}  // namespace posthorn::store::sqlite::detail
