// Gathered WAL writes: a SQLite VFS that is the default one, except that each WAL file's
// consecutive writes, and each database file's, are gathered in memory and written with one
// call.
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
// rolled back, no send is acknowledged). Other files (the shared memory, journals) are the
// default VFS's own.
//
// A database file is written only by checkpoints (WAL mode), which copy the frames in the
// order of their pages: a message's overflow pages, allocated one after another, went out
// one pwrite each (25 for 100 KB, with the reads of the frames; the checkpointer's system
// time was a tenth of the server's CPU delivering 100 KB messages in bench/delivery.sh).
// Gathered, they go in one. Safe for the same reasons: SQLite lets readers take the database
// file's pages instead of the WAL's only once a checkpoint has copied the whole WAL, and it
// syncs (and truncates) the database file before it says so; a read, a size query or an
// unlock of the file writes out what was gathered first too.
#pragma once

namespace posthorn::store::sqlite::detail {

// The VFS's name, for sqlite3_open_v2; registered (not as the default) at the first call.
// Its files are opened by whatever VFS is the default at the time.
const char* gathered_wal_vfs();

}  // namespace posthorn::store::sqlite::detail
