// For tests: the default VFS with some methods of some files replaced, registered as the
// default while the object lives. The default VFS opens each file; a file opened with one
// of `flags` (SQLITE_OPEN_MAIN_DB, SQLITE_OPEN_WAL, …) then gets a copy of its methods that
// `edit` changed (one copy per methods table; `edit` keeps the real ones it replaces).
#pragma once

#include <sqlite3.h>

#include <map>
#include <mutex>

namespace posthorn::store::sqlite::detail::testing {

class HookedVfs {
  public:
    using Edit = void (*)(sqlite3_io_methods& methods);

    HookedVfs(const char* name, int flags, Edit edit) : flags_(flags), edit_(edit) {
        real_ = sqlite3_vfs_find(nullptr);
        vfs_ = *real_;
        vfs_.zName = name;
        vfs_.pAppData = this;
        vfs_.xOpen = &HookedVfs::open;
        sqlite3_vfs_register(&vfs_, 1);
    }
    ~HookedVfs() {
        sqlite3_vfs_unregister(&vfs_);
        sqlite3_vfs_register(real_, 1);
    }
    HookedVfs(const HookedVfs&) = delete;
    HookedVfs& operator=(const HookedVfs&) = delete;

  private:
    static int open(sqlite3_vfs* vfs, sqlite3_filename name, sqlite3_file* file, int flags,
                    int* out_flags) {
        auto* self = static_cast<HookedVfs*>(vfs->pAppData);
        const int rc = self->real_->xOpen(self->real_, name, file, flags, out_flags);
        if (rc != SQLITE_OK || file->pMethods == nullptr || !(flags & self->flags_)) return rc;
        std::lock_guard lock(self->mutex_);
        auto [it, fresh] = self->methods_.try_emplace(file->pMethods, *file->pMethods);
        if (fresh) self->edit_(it->second);
        file->pMethods = &it->second;
        return rc;
    }

    const int flags_;
    const Edit edit_;
    sqlite3_vfs* real_;
    sqlite3_vfs vfs_{};
    std::mutex mutex_;
    std::map<const sqlite3_io_methods*, sqlite3_io_methods> methods_;
};

}  // namespace posthorn::store::sqlite::detail::testing
