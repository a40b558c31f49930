// The lists' search index of the SQLite back end (docs/architecture.md, "The lists' search
// index"): an FTS5 trigram index (case-insensitive substrings of three characters or more)
// of what each list searches, in a database file of its own beside the store's
// (`<path>-search`), kept by a thread of its own (SCHED_IDLE). Indexing an email costs
// more than the writer spends on storing it (~25 µs against ~15), so it is never done in a
// send's transaction: sends do not wait for it. It indexes once the sends pause (no poke()
// for kQuiet), or while they go on once kMaxTail recipients wait, so that the scan of the
// tail (below) stays short: even at SCHED_IDLE, indexing beside a stream of sends took a
// third of posthorn's CPU samples in bench/send_emails.sh, its writes and fsyncs competing
// with the store's. (PostgreSQL's indexer keeps the same rule: store/pg/detail/
// search_indexer.hpp.)
//
// It follows the store. Recipient ids grow with every email written, so the emails whose
// recipients lie above its mark are the ones not yet indexed; inbound emails are followed by
// their rowids in the same way. A list reads the index for what it has indexed and scans the
// rest (the tail) as before, in one read transaction over both files (the index is attached
// to every read connection as schema `search`): an answer is complete at any moment, and
// fast while the tail is short.
//
// A document's rowid orders it by creation time: (created_at − kEpoch) << 22, plus a
// counter among the documents of the same millisecond (in the order they were indexed), so
// that a search reads its matches in the order of the list, newest first, without sorting
// them, and a date bound is a range of rowids. The index is derived data: a file of another
// version is dropped and built again from the store.
//
// Thread-safety: poke() and wait_caught_up() from any thread.
#pragma once

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "store/sqlite/detail/db.hpp"

namespace posthorn::store::sqlite::detail {

class SearchIndex {
  public:
    static constexpr std::int64_t kEpoch = 1'600'000'000'000;  // 2020-09-13, in UnixMs
    static constexpr int kTieBits = 22;
    // The times rowids can hold: 2^41 ms (70 years) on each side of kEpoch.
    static constexpr std::int64_t kFirstMs = kEpoch - ((std::int64_t{1} << (63 - kTieBits)) - 1);
    static constexpr std::int64_t kLastMs = kEpoch + ((std::int64_t{1} << (63 - kTieBits)) - 1);
    static constexpr int kVersion = 2;
    // Sends paused this long: index. Or this many recipients wait (counted each second).
    static constexpr std::chrono::milliseconds kQuiet{100};
    static constexpr std::int64_t kMaxTail = 30'000;
    // The documents are also counted per account in buckets of these lengths (ms): level 0
    // the second, 1 the minute, 2 the hour, 3 the day (<docs>_buckets), so that a count over
    // a time range sums at most a few hundred buckets and steps over the documents of its
    // two partial seconds only.
    static constexpr std::int64_t kBucketMs[] = {1'000, 60'000, 3'600'000, 86'400'000};

    // The first rowid of millisecond `at`. Rowids span 2^41 ms (70 years) on each side of
    // kEpoch; a time beyond is taken as the nearest end (a date bound of the year 3000 or 1
    // would otherwise overflow).
    static std::int64_t rowid_at(std::int64_t at) {
        const std::int64_t ms = std::clamp(at, kFirstMs, kLastMs) - kEpoch;
        return ms * (std::int64_t{1} << kTieBits);
    }
    // The path of the index of the store at `store_path`.
    static std::string path_of(const std::string& store_path) { return store_path + "-search"; }

    // Opens (creating, or building anew when its version is not kVersion) the index of the
    // store at `store_path`, with a read connection to the store for the thread. Blocking.
    static Result<std::unique_ptr<SearchIndex>> open(const std::string& store_path);
    ~SearchIndex();  // stops the thread
    SearchIndex(const SearchIndex&) = delete;
    SearchIndex& operator=(const SearchIndex&) = delete;

    void start();
    void stop();
    // Rows were committed: index them now rather than at the next second.
    void poke();
    // Waits until everything committed before the call is indexed, at most `limit`. True
    // when it is. For tests and benchmarks.
    bool wait_caught_up(std::chrono::milliseconds limit);

  private:
    SearchIndex(Db store, Db index);
    void loop();
    // One batch of emails (or inbound emails); `more` when the batch was full (more wait).
    struct Progress {
        bool more = false;
    };
    // Waits until the sends pause, a caller waits (wait_caught_up) or the tail is long. False
    // on stop().
    bool wait_for_quiet();
    Result<Progress> index_emails();
    Result<Progress> index_inbound();
    Result<std::int64_t> account_no(const std::string& account_id);
    Result<std::int64_t> next_rowid(const char* table, std::int64_t created_at);

    Db store_;  // read-only
    Db index_;
    std::mutex mutex_;
    std::condition_variable cv_;                       // wakes the thread
    std::condition_variable done_cv_;                  // wakes wait_caught_up()
    bool poked_ = false;                               // guarded by mutex_
    std::chrono::steady_clock::time_point last_poke_;  // guarded by mutex_
    bool stop_ = false;                                // guarded by mutex_
    std::uint64_t requested_ = 0;  // guarded by mutex_: wait_caught_up() calls made
    std::uint64_t completed_ = 0;  // guarded by mutex_: of those, the ones caught up with
    std::thread thread_;
};

// Attaches the index of the store at `store_path` to a read connection, as schema `search`.
Result<void> attach_search_index(Db& db, const std::string& store_path);

}  // namespace posthorn::store::sqlite::detail
