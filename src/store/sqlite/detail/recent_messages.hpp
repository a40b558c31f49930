// The messages of the emails written last, kept in memory for delivery, which reads each
// email's message moments after it is stored: from here it costs a copy, where a read of
// the database costs a hop to a reader thread and one read of the WAL or the database file
// for each of the blob's pages (25 for a 100 KB message). A message never changes once
// stored, so a copy here is the stored one. Bounded by bytes; the oldest go first.
// Private to store/sqlite. Thread-safe.
#pragma once

#include <cstddef>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>

namespace posthorn::store::sqlite::detail {

class RecentMessages {
  public:
    explicit RecentMessages(std::size_t budget_bytes) : budget_(budget_bytes) {}

    // `raw` points into `owner`, which the cache keeps alive.
    void put(const std::string& account_id, const std::string& email_id,
             std::shared_ptr<const void> owner, const std::string* raw) {
        if (raw->size() > budget_ / 4) return;  // one message may not push out a quarter
        std::lock_guard lock(mutex_);
        auto key = account_id + '\0' + email_id;
        if (by_key_.contains(key)) return;
        bytes_ += raw->size();
        order_.push_back(key);
        by_key_.emplace(std::move(key), Entry{std::move(owner), raw});
        while (bytes_ > budget_ && !order_.empty()) {
            auto it = by_key_.find(order_.front());
            bytes_ -= it->second.raw->size();
            by_key_.erase(it);
            order_.pop_front();
        }
    }

    std::optional<std::string> find(const std::string& account_id, const std::string& email_id) {
        std::lock_guard lock(mutex_);
        auto it = by_key_.find(account_id + '\0' + email_id);
        if (it == by_key_.end()) return std::nullopt;
        return *it->second.raw;
    }

  private:
    struct Entry {
        std::shared_ptr<const void> owner;
        const std::string* raw;
    };
    const std::size_t budget_;
    std::mutex mutex_;
    std::size_t bytes_ = 0;                          // guarded by mutex_
    std::deque<std::string> order_;                  // guarded by mutex_: oldest first
    std::unordered_map<std::string, Entry> by_key_;  // guarded by mutex_
};

}  // namespace posthorn::store::sqlite::detail
