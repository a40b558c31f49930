// The lookups every request makes (its API key; a send's sender domain), answered from memory
// for as long as nothing has changed them: a cache of found rows valid for one epoch, which
// each back end moves when a change may have made them stale (SQLite: a counter in a file
// beside the database, store/sqlite/detail/lookup_cache.hpp; PostgreSQL: NOTIFY between
// nodes, store/pg/detail/impl.hpp). Private to the store's back ends.
#pragma once

#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>

namespace posthorn::store::detail {

// Values by key, valid for one epoch: a lookup with a newer epoch empties the cache first.
// Found rows only: a miss is not remembered (no memory for made-up keys), so a key or
// domain made after a miss is found at the next lookup.
template <class V>
class LookupCache {
  public:
    static constexpr std::size_t kMaxEntries = 10000;

    std::optional<V> find(const std::string& key, std::uint64_t epoch) {
        std::lock_guard lock(mutex_);
        if (epoch != epoch_) {
            if (epoch < epoch_) return std::nullopt;  // loaded before another thread moved on
            map_.clear();
            epoch_ = epoch;
            return std::nullopt;
        }
        auto it = map_.find(key);
        if (it == map_.end()) return std::nullopt;
        return it->second;
    }

    // `epoch`: the one loaded before the row was read, so that a row read before a change
    // was committed is not kept after the change is announced.
    void put(std::string key, V value, std::uint64_t epoch) {
        std::lock_guard lock(mutex_);
        if (epoch != epoch_) return;
        if (map_.size() >= kMaxEntries) map_.clear();
        map_.insert_or_assign(std::move(key), std::move(value));
    }

  private:
    std::mutex mutex_;
    std::uint64_t epoch_ = 0;
    std::unordered_map<std::string, V> map_;
};

}  // namespace posthorn::store::detail
