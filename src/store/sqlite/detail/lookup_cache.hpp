// The lookups every request makes (its API key; a send's sender domain) answered from
// memory, and how every process that opens the database learns that they went stale.
//
// A change to what is cached (a key revoked, a domain verified or its settings changed) may
// be made by another process: `posthorn key revoke` runs beside the server. So the count
// of such changes, the epoch, lives in a small file beside the database (`<db>-epoch`),
// mapped into the memory of every process that opens it. A write that changes a key or a
// domain adds one to it once committed; a lookup reads it first (one load from memory, no
// system call) and, when it has moved, drops what it has cached before it looks. A request
// that starts after the writer's answer therefore never sees the old row.
#pragma once

#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>

#include "core/result.hpp"
#include "store/detail/lookup_cache.hpp"

namespace posthorn::store::sqlite::detail {

class Epoch {
  public:
    // Maps `path`, made if missing with permission bits `mode` (those of the database, as
    // SQLite gives its -wal and -shm files: whoever may write the database may move the count).
    static Result<Epoch> open(const std::string& path, unsigned mode = 0644);
    Epoch() = default;
    Epoch(Epoch&& other) noexcept : word_(other.word_) { other.word_ = nullptr; }
    Epoch& operator=(Epoch&& other) noexcept;
    ~Epoch();

    bool valid() const { return word_ != nullptr; }
    std::uint64_t load() const;
    void bump();

  private:
    explicit Epoch(std::uint64_t* word) : word_(word) {}
    std::uint64_t* word_ = nullptr;  // in a shared mapping of the file
};

using store::detail::LookupCache;

}  // namespace posthorn::store::sqlite::detail
