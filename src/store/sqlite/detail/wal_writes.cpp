#include "store/sqlite/detail/wal_writes.hpp"

#include <sqlite3.h>

#include <cstddef>
#include <cstring>
#include <mutex>

namespace posthorn::store::sqlite::detail {
namespace {

// The unix VFS writes at most 128 KB - 1 bytes in one call (it masks the length with
// 0x1ffff): a whole number of pages below that.
constexpr std::size_t kCapacity = 124 * 1024;
// Room for the file of a default VFS registered after ours with larger files (a test's).
constexpr int kSlack = 512;

// What a gathered WAL file holds after the default VFS's own file, at the end of the
// object SQLite allocates (szOsFile bytes): the default VFS's methods, which get the same
// pointer, see only their own state at its start.
struct Gather {
    const sqlite3_io_methods* methods;  // the default VFS's, for this file
    char* buffer;                       // kCapacity bytes, from the first write on
    std::size_t length;                 // bytes gathered
    sqlite3_int64 offset;               // where they go
};

sqlite3_vfs g_vfs{};

Gather& gather(sqlite3_file* f) {
    return *reinterpret_cast<Gather*>(reinterpret_cast<char*>(f) + g_vfs.szOsFile -
                                      static_cast<int>(sizeof(Gather)));
}

const sqlite3_io_methods& real(sqlite3_file* f) { return *gather(f).methods; }

// Writes what was gathered; a failure is the caller's (the data is dropped: SQLite fails
// the transaction that wrote it).
int flush(sqlite3_file* f) {
    auto& g = gather(f);
    if (g.length == 0) return SQLITE_OK;
    const int rc = g.methods->xWrite(f, g.buffer, static_cast<int>(g.length), g.offset);
    g.length = 0;
    return rc;
}

int on_write(sqlite3_file* f, const void* data, int n, sqlite3_int64 at) {
    auto& g = gather(f);
    const auto size = static_cast<std::size_t>(n);
    if (g.length > 0 && at == g.offset + static_cast<sqlite3_int64>(g.length) &&
        g.length + size <= kCapacity) {
        std::memcpy(g.buffer + g.length, data, size);
        g.length += size;
        return SQLITE_OK;
    }
    if (const int rc = flush(f); rc != SQLITE_OK) return rc;
    if (size > kCapacity) return g.methods->xWrite(f, data, n, at);
    if (g.buffer == nullptr) {
        g.buffer = static_cast<char*>(sqlite3_malloc64(kCapacity));
        if (g.buffer == nullptr) return g.methods->xWrite(f, data, n, at);
    }
    std::memcpy(g.buffer, data, size);
    g.length = size;
    g.offset = at;
    return SQLITE_OK;
}

int on_close(sqlite3_file* f) {
    auto& g = gather(f);
    const int flushed = flush(f);
    sqlite3_free(g.buffer);
    g.buffer = nullptr;
    const int closed = g.methods->xClose(f);
    return flushed != SQLITE_OK ? flushed : closed;
}

int on_read(sqlite3_file* f, void* out, int n, sqlite3_int64 at) {
    if (const int rc = flush(f); rc != SQLITE_OK) return rc;
    return real(f).xRead(f, out, n, at);
}

int on_truncate(sqlite3_file* f, sqlite3_int64 size) {
    if (const int rc = flush(f); rc != SQLITE_OK) return rc;
    return real(f).xTruncate(f, size);
}

int on_sync(sqlite3_file* f, int flags) {
    if (const int rc = flush(f); rc != SQLITE_OK) return rc;
    return real(f).xSync(f, flags);
}

int on_file_size(sqlite3_file* f, sqlite3_int64* size) {
    if (const int rc = flush(f); rc != SQLITE_OK) return rc;
    return real(f).xFileSize(f, size);
}

int on_file_control(sqlite3_file* f, int op, void* arg) {
    if (const int rc = flush(f); rc != SQLITE_OK) return rc;
    return real(f).xFileControl(f, op, arg);
}

int on_fetch(sqlite3_file* f, sqlite3_int64 at, int n, void** out) {
    *out = nullptr;  // no mapping: SQLite reads instead
    if (real(f).iVersion < 3 || real(f).xFetch == nullptr) return SQLITE_OK;
    if (const int rc = flush(f); rc != SQLITE_OK) return rc;
    return real(f).xFetch(f, at, n, out);
}

int on_unfetch(sqlite3_file* f, sqlite3_int64 at, void* p) {
    if (real(f).iVersion < 3 || real(f).xUnfetch == nullptr) return SQLITE_OK;
    return real(f).xUnfetch(f, at, p);
}

// The shared-memory methods belong to database files; a WAL file never gets these calls.
int on_shm_map(sqlite3_file* f, int region, int size, int extend, void volatile** out) {
    if (real(f).iVersion < 2) return SQLITE_IOERR_SHMMAP;
    return real(f).xShmMap(f, region, size, extend, out);
}
int on_shm_lock(sqlite3_file* f, int offset, int n, int flags) {
    if (real(f).iVersion < 2) return SQLITE_IOERR_SHMLOCK;
    return real(f).xShmLock(f, offset, n, flags);
}
void on_shm_barrier(sqlite3_file* f) {
    if (real(f).iVersion >= 2) real(f).xShmBarrier(f);
}
int on_shm_unmap(sqlite3_file* f, int drop) {
    if (real(f).iVersion < 2) return SQLITE_OK;
    return real(f).xShmUnmap(f, drop);
}

const sqlite3_io_methods kMethods = {
    .iVersion = 3,
    .xClose = on_close,
    .xRead = on_read,
    .xWrite = on_write,
    .xTruncate = on_truncate,
    .xSync = on_sync,
    .xFileSize = on_file_size,
    .xLock = [](sqlite3_file* f, int lock) { return real(f).xLock(f, lock); },
    .xUnlock =
        [](sqlite3_file* f, int lock) {
            // A database file's lock may go to another connection: what it wrote goes out first.
            if (const int rc = flush(f); rc != SQLITE_OK) return rc;
            return real(f).xUnlock(f, lock);
        },
    .xCheckReservedLock = [](sqlite3_file* f,
                             int* out) { return real(f).xCheckReservedLock(f, out); },
    .xFileControl = on_file_control,
    .xSectorSize = [](sqlite3_file* f) { return real(f).xSectorSize(f); },
    .xDeviceCharacteristics = [](sqlite3_file* f) { return real(f).xDeviceCharacteristics(f); },
    .xShmMap = on_shm_map,
    .xShmLock = on_shm_lock,
    .xShmBarrier = on_shm_barrier,
    .xShmUnmap = on_shm_unmap,
    .xFetch = on_fetch,
    .xUnfetch = on_unfetch,
};

// Opens with the default VFS of the moment (ours is never the default), then takes over the
// methods of a WAL file and of a database file.
int on_open(sqlite3_vfs*, sqlite3_filename name, sqlite3_file* f, int flags, int* out_flags) {
    sqlite3_vfs* base = sqlite3_vfs_find(nullptr);
    if (base == nullptr || base == &g_vfs) base = sqlite3_vfs_find("unix");
    if (base == nullptr || base->szOsFile > g_vfs.szOsFile - static_cast<int>(sizeof(Gather)))
        return SQLITE_CANTOPEN;
    const int rc = base->xOpen(base, name, f, flags, out_flags);
    if (rc != SQLITE_OK || f->pMethods == nullptr ||
        (flags & (SQLITE_OPEN_WAL | SQLITE_OPEN_MAIN_DB)) == 0)
        return rc;
    gather(f) = Gather{.methods = f->pMethods, .buffer = nullptr, .length = 0, .offset = 0};
    f->pMethods = &kMethods;
    return rc;
}

}  // namespace

const char* gathered_wal_vfs() {
    static std::once_flag registered;
    std::call_once(registered, [] {
        sqlite3_vfs* base = sqlite3_vfs_find("unix");
        if (base == nullptr) base = sqlite3_vfs_find(nullptr);
        g_vfs = *base;  // names, access, deletion, time: the default's
        g_vfs.pNext = nullptr;
        g_vfs.zName = "posthorn-gathered-wal";
        const int own = (base->szOsFile + kSlack + 7) & ~7;
        g_vfs.szOsFile = own + static_cast<int>(sizeof(Gather));
        g_vfs.xOpen = on_open;
        sqlite3_vfs_register(&g_vfs, 0);
    });
    return g_vfs.zName;
}

}  // namespace posthorn::store::sqlite::detail
