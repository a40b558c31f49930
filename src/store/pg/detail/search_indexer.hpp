// The lists' search index on PostgreSQL, kept off the send's transaction (migration 19): a send
// writes what the lists search of its email to search_todo (no trigram index); this indexer, a
// thread with a connection of its own on each node, moves waiting emails into email_search (and its
// trigram index), up to kBatch a statement, taking rows with SKIP LOCKED so that the nodes'
// indexers share the work and never index an email twice. It runs while the node's writes pause
// (`quiet`: no job for kQuiet), as SQLite's indexer runs on the CPU nothing else wants, and under
// writes that never pause once kMaxBacklog emails wait, so that a search's scan of the waiting
// emails stays short (30,000: about 20 ms of a search at most). A search is answered the same
// whenever it runs (pg_emails.cpp reads both). A lost connection is made again at the next pass.
// Private to store/pg.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <thread>

#include "core/result.hpp"
#include "store/pg/detail/conn.hpp"

namespace posthorn::store::pg::detail {

class SearchIndexer {
  public:
    static constexpr std::int64_t kBatch = 2000;             // emails a statement
    static constexpr std::chrono::milliseconds kPoll{100};   // how often it looks
    static constexpr std::chrono::milliseconds kQuiet{100};  // writes paused this long: index
    static constexpr std::int64_t kMaxBacklog = 30'000;      // or this many emails waiting
    static constexpr std::chrono::seconds kBacklogCheck{1};  // counted this often (up to it)

    // `quiet()`: whether the node's writes have paused (from the indexer's thread);
    // `max_backlog`: kMaxBacklog but in tests.
    SearchIndexer(Conn conn, std::function<bool()> quiet, std::int64_t max_backlog = kMaxBacklog);
    ~SearchIndexer();  // stops the thread
    SearchIndexer(const SearchIndexer&) = delete;
    SearchIndexer& operator=(const SearchIndexer&) = delete;

    void start();
    void stop();  // a statement under way ends first

    // Indexes every email waiting now, on the caller's thread (tests: the index's answers
    // rather than the waiting emails'). Answers how many it took.
    Result<std::int64_t> index_all();

  private:
    void loop();
    // One statement: up to kBatch waiting emails into the index. Answers how many it took.
    // Under conn_mutex_.
    Result<std::int64_t> index_batch();
    // Whether max_backlog_ emails or more wait. Under conn_mutex_.
    Result<bool> backlog_full();
    // Indexes until fewer than kBatch were taken or stop(). Under conn_mutex_.
    Result<std::int64_t> drain();

    Conn conn_;  // guarded by conn_mutex_
    std::function<bool()> quiet_;
    std::int64_t max_backlog_;
    std::mutex conn_mutex_;
    std::mutex mutex_;
    std::condition_variable cv_;
    std::atomic<bool> stop_{false};  // set under mutex_ (cv_)
    std::thread thread_;
};

}  // namespace posthorn::store::pg::detail
