// Group commit: one thread owns the write connection; submitted jobs are taken in batches,
// each batch runs in one transaction and one fsync, and every job is acknowledged after the
// commit. When a job fails, the batch runs again with each job in its own savepoint, so
// that one failing job does not undo the others (a job may therefore run twice: it must
// depend on nothing but the database and what it holds).
// A job that nobody waits for (the request log's) is lazy: lazy jobs are gathered and go
// together, with the first batch after the oldest of them has waited kLazyDelay, not with
// every batch: each B-tree a batch touches is at least one more page to write to the WAL,
// and the request log's are two (its table and the per-account count; three, about a fifth
// of a small batch of sends, until migration 009). And while awaited jobs arrive close
// together (the mean gap between them, a moving average, under half of kGatherWindow), a
// batch holds its commit for the next one, up to twice that gap after the last and at most
// kGatherWindow after the first, so that sends arriving together share an fsync instead of
// paying for one each (PostgreSQL's commit_delay, which waits only when commit_siblings
// transactions are open, is the same idea); meanwhile the batch's transaction is open and
// each job runs as soon as it comes, so that only the last job and the COMMIT are left once
// the batch closes. A job that comes alone, after a quiet spell, never waits. The statistics
// counters the jobs add to (Db::pending_stats) are written once, summed, just before the
// COMMIT: a group commit of sends of one account and hour touches each counter once.
#pragma once

#include <chrono>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include <boost/asio/async_result.hpp>
#include <boost/asio/executor_work_guard.hpp>

#include "core/asio.hpp"
#include "core/result.hpp"
#include "store/errors.hpp"
#include "store/sqlite/detail/db.hpp"

namespace posthorn::store::sqlite::detail {

class Writer {
  public:
    static constexpr std::chrono::milliseconds kLazyDelay{25};
    static constexpr std::chrono::microseconds kGatherWindow{1000};

    using Job = std::function<error_code(Db&)>;
    using Done = std::function<void(error_code)>;  // may be empty: nobody waits

    explicit Writer(Db db, std::chrono::microseconds gather_window = kGatherWindow,
                    std::chrono::milliseconds lazy_delay = kLazyDelay);
    ~Writer();
    void start();
    // Runs what is pending, then stops; later submissions complete with errc::closed.
    void stop();
    void submit(Job job, Done done);
    // Runs on the writer's thread before each batch (`idle` false) and when it runs out of
    // work (`idle` true). Set before start().
    void between_batches(std::function<void(Db&, bool idle)> fn) { between_ = std::move(fn); }
    // The lazy jobs submitted so far go with the next batch, without waiting for their delay.
    void hurry_lazy();

    // Runs `fn(Db&) -> Result<T>` in the next batch; resumes the caller on its executor once
    // the batch is durable. A failed commit fails every job of the batch.
    // Deliberately not a coroutine: GCC 12 mishandles lambda temporaries that live across a
    // suspension point, so the operation is an initiation object instead.
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
                [fn = std::move(fn), out](Db& db) mutable -> error_code {
                    const auto& r = out->emplace(fn(db));
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
    void take_pending(std::vector<Pending>& batch);
    void run_batch(std::vector<Pending>& batch);
    bool run_together(std::vector<Pending>& batch);
    void run_apart(std::vector<Pending>& batch);
    error_code commit(std::size_t jobs);
    void roll_back();

    Db db_;
    const std::chrono::microseconds gather_window_;
    const std::chrono::milliseconds lazy_delay_;
    std::function<void(Db&, bool)> between_;
    std::mutex mutex_;
    std::condition_variable cv_;
    std::vector<Pending> pending_;  // guarded by mutex_: jobs somebody waits for
    std::vector<Pending> lazy_;     // guarded by mutex_: jobs nobody waits for
    // Guarded by mutex_: when the last awaited job came, and the moving average of the gaps
    // between them (long after a quiet spell).
    std::chrono::steady_clock::time_point last_arrival_;
    std::chrono::microseconds mean_gap_;
    bool hurry_ = false;  // guarded by mutex_: the lazy jobs go with the next batch
    std::chrono::steady_clock::time_point first_lazy_;     // guarded by mutex_
    std::chrono::steady_clock::time_point first_awaited_;  // guarded by mutex_
    bool stopping_ = false;                                // guarded by mutex_
    // The writer's thread alone: the open batch holds an awaited job, and may wait for more
    // until gather_until_.
    bool gathering_ = false;
    std::chrono::steady_clock::time_point gather_until_;
    bool closed_ = true;  // guarded by mutex_: no thread takes work
    std::thread thread_;
};

}  // namespace posthorn::store::sqlite::detail
