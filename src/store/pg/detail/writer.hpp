// Group commit on PostgreSQL: one thread owns the write connection; the jobs submitted while it
// works are taken together, run in one transaction and acknowledged after its one COMMIT (one WAL
// flush on the server for all of them). Jobs that come while a batch runs join its open
// transaction, up to kMaxBatch and for kGatherFor. When a job fails, the transaction is rolled back
// and the batch runs again with each job in a savepoint of its own, so that the one failing undoes
// nothing of the others; a job that meets a deadlock or a serialization failure (errc::busy: two
// nodes locking rows in opposite orders) is run again in a next transaction, once the others are
// committed and their locks let go, in three transactions at most. So a job may run more
// than once: it must depend on nothing but the database and what it holds. A job that nobody waits
// for (the request log's) is lazy, as in the SQLite back end: lazy jobs go together, with the first
// batch after the oldest of them has waited kLazyDelay. A commit that asked for it (notify()) sends
// NOTIFYs with the COMMIT, which PostgreSQL delivers to the listening nodes when the commit is
// done. A connection found broken at the start of a batch is made again for it; one that breaks
// during a batch fails the batch (errc::io: not acknowledged, whether or not a COMMIT got through).
// While jobs run together, a statement a job does not read back (Conn::queue: a send's rows) is
// pipelined: sent without waiting for its answer, which comes before the COMMIT (Conn::sync); a
// failure there runs the batch apart, where every statement is waited for.
// Private to store/pg.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <boost/asio/async_result.hpp>
#include <boost/asio/executor_work_guard.hpp>

#include "core/asio.hpp"
#include "core/result.hpp"
#include "store/errors.hpp"
#include "store/pg/detail/conn.hpp"
#include "store/types.hpp"

namespace posthorn::store::pg::detail {

// What a job may ask of the batch it runs in: channels to NOTIFY at its commit, and
// statistics counters to add to at its end (Writer's `finish`).
class Batch {
  public:
    void notify(const char* channel);
    const std::vector<const char*>& channels() const { return channels_; }
    // The counters are written once, at the end of the transaction, in one statement that
    // takes their rows in one order: rows every node's transactions share (an account's
    // hour) are then the last locks each takes, always in the same order, so that two nodes'
    // batches never deadlock on them, and they are held only until the COMMIT.
    void add_stats(const std::vector<StatBump>& bumps);
    const std::vector<StatBump>& stats() const { return stats_; }
    void clear() {
        channels_.clear();
        stats_.clear();
    }

    // What a job has asked so far; undo() forgets what was asked after it (a job rolled back
    // to its savepoint).
    struct Mark {
        std::size_t channels = 0;
        std::size_t stats = 0;
    };
    Mark mark() const { return {channels_.size(), stats_.size()}; }
    void undo(Mark m);

  private:
    std::vector<const char*> channels_;
    std::vector<StatBump> stats_;
};

class Writer {
  public:
    static constexpr std::chrono::milliseconds kLazyDelay{25};
    static constexpr std::size_t kMaxBatch = 1024;
    // Jobs that arrive while a batch runs join it for this long after it began, so that under
    // a steady stream the first of them is not kept waiting for all the others.
    static constexpr std::chrono::microseconds kGatherFor{2000};

    using Job = std::function<error_code(Conn&, Batch&)>;
    using Done = std::function<void(error_code)>;  // may be empty: nobody waits
    // Runs last in every transaction, after the jobs and before the COMMIT: writes what the
    // jobs left in the Batch to be written once (its statistics).
    using Finish = std::function<error_code(Conn&, const Batch&)>;

    Writer(Conn conn, Finish finish);
    ~Writer();
    Writer(const Writer&) = delete;
    Writer& operator=(const Writer&) = delete;
    void start();
    // Runs what is pending, then stops; later submissions complete with errc::closed.
    void stop();
    void submit(Job job, Done done);
    // The lazy jobs submitted so far go with the next batch, without waiting for their delay.
    void hurry_lazy();
    // The process id of the writer connection's backend on the server (its NOTIFYs carry it).
    const std::atomic<int>& backend_pid() const { return backend_pid_; }

    // Runs `fn(Conn&, Batch&) -> Result<T>` in the next batch; resumes the caller on its
    // executor once the batch is committed. A failed commit fails every job of the batch.
    // Not a coroutine, as the SQLite writer's: GCC 12 mishandles lambda temporaries that
    // live across a suspension point, so the operation is an initiation object instead.
    template <class T, class Fn>
    asio::awaitable<Result<T>> write(Fn fn) {
        return asio::async_initiate<const asio::use_awaitable_t<>&, void(Result<T>)>(
            WriteOp<T, Fn>{this, std::move(fn)}, asio::use_awaitable);
    }

  private:
    template <class T, class Fn>
    struct WriteOp {
        Writer* writer;
        Fn fn;
        template <class Handler>
        void operator()(Handler handler) {
            auto h = std::make_shared<Handler>(std::move(handler));
            auto work = asio::make_work_guard(asio::get_associated_executor(*h));
            auto out = std::make_shared<std::optional<Result<T>>>();
            writer->submit(
                [fn = std::move(fn), out](Conn& c, Batch& b) mutable -> error_code {
                    const auto& r = out->emplace(fn(c, b));
                    return r ? error_code{} : r.error();
                },
                [h, out, work](error_code ec) mutable {
                    Result<T> r = ec                 ? Result<T>(boost::system::in_place_error, ec)
                                  : out->has_value() ? std::move(**out)
                                                     : Result<T>(boost::system::in_place_error,
                                                                 make_error_code(errc::io));
                    asio::post(work.get_executor(),
                               [h, r = std::move(r)]() mutable { (*h)(std::move(r)); });
                    work.reset();
                });
        }
    };

    struct Pending {
        Job job;
        Done done;
    };
    void loop();
    void run_batch(std::vector<Pending>& batch);
    bool run_together(std::vector<Pending>& batch);
    void run_apart(std::vector<Pending>& batch);
    error_code begin();
    error_code commit();
    static void answer(std::vector<Pending>& batch, error_code ec);

    Conn conn_;
    Finish finish_;
    std::atomic<int> backend_pid_;
    Batch batch_state_;  // the writer's thread alone
    std::mutex mutex_;
    std::condition_variable cv_;
    std::vector<Pending> pending_;  // guarded by mutex_: jobs somebody waits for
    std::vector<Pending> lazy_;     // guarded by mutex_: jobs nobody waits for
    std::chrono::steady_clock::time_point first_lazy_;  // guarded by mutex_
    bool hurry_ = false;                                // guarded by mutex_
    bool stopping_ = false;                             // guarded by mutex_
    bool closed_ = true;                                // guarded by mutex_: no thread takes work
    std::thread thread_;
};

}  // namespace posthorn::store::pg::detail
