// Group commit on PostgreSQL: a few lanes, each a thread that owns a write connection, take the
// jobs submitted; the jobs a lane takes together run in one transaction and are acknowledged
// after its one COMMIT (one WAL flush on the server for all of them). A lane's statements run in
// one server process, on one core, and a lane waits for its COMMIT's flush: while one lane
// commits, or its server process works, another runs the next batch (kLanes). Lanes of one node
// meet each other's rows as two nodes do (the rules below hold for both). Jobs that come while a
// batch runs join its open transaction, up to kMaxBatch and for kGatherFor. When a job fails, the
// transaction is rolled back and the batch runs again with each job in a savepoint of its own, so
// that the one failing undoes nothing of the others; a job that meets a deadlock or a serialization
// failure (errc::busy: two nodes locking rows in opposite orders) is run again in a next
// transaction, once the others are committed and their locks let go, in three transactions at most.
// So a job may run more than once: it must depend on nothing but the database and what it holds. A
// job that nobody waits for (the request log's) is lazy, as in the SQLite back end: lazy jobs go
// together, with the first batch after the oldest of them has waited kLazyDelay. A commit that
// asked for it (notify()) sends NOTIFYs with the COMMIT, which PostgreSQL delivers to the listening
// nodes when the commit is done. A connection found broken at the start of a batch is made again
// for it; one that breaks during a batch fails the batch (errc::io: not acknowledged, whether or
// not a COMMIT got through). While jobs run together, a statement a job does not read back
// (Conn::queue: a send's rows) is pipelined: sent without waiting for its answer, which comes
// before the COMMIT (Conn::sync); a failure there runs the batch apart, where every statement is
// waited for. Private to store/pg.
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

// What a job may ask of the batch it runs in: channels to NOTIFY at its commit, statistics
// counters to add to at its end (Writer's `finish`), and new emails whose rows go in together.
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
    // New emails whose rows wait to be inserted with others, in one statement for many
    // (executing a statement costs the server more than a row of it): only while the batch's
    // jobs run together (the connection pipelines: Conn::pipeline_allowed), where a failure
    // reruns them apart. Apart, each job's rows are written at once, so that a failure is its
    // own. Each email must outlive the batch's transaction (its job holds it).
    void add_email(const NewEmail& email) { emails_.push_back(&email); }
    std::vector<const NewEmail*>& emails() { return emails_; }
    void clear() {
        channels_.clear();
        stats_.clear();
        emails_.clear();
    }

    // What a job has asked so far; undo() forgets what was asked after it (a job rolled back
    // to its savepoint).
    struct Mark {
        std::size_t channels = 0;
        std::size_t stats = 0;
        std::size_t emails = 0;
    };
    Mark mark() const { return {channels_.size(), stats_.size(), emails_.size()}; }
    void undo(Mark m);

  private:
    std::vector<const char*> channels_;
    std::vector<StatBump> stats_;
    std::vector<const NewEmail*> emails_;
};

class Writer {
  public:
    static constexpr std::chrono::milliseconds kLazyDelay{25};
    static constexpr std::size_t kMaxBatch = 1024;
    // Jobs that arrive while a batch runs join it for this long after it began, so that under
    // a steady stream the first of them is not kept waiting for all the others.
    static constexpr std::chrono::microseconds kGatherFor{2000};
    // Lanes of a store's writer (PgStore::open): two, so that a batch runs while another
    // commits; more gain little on a machine of few cores, where the server's processes and
    // posthorn's share them.
    static constexpr std::size_t kLanes = 2;

    using Job = std::function<error_code(Conn&, Batch&)>;
    using Done = std::function<void(error_code)>;  // may be empty: nobody waits
    // Runs last in every transaction, after the jobs and before the COMMIT: writes what the
    // jobs left in the Batch to be written together (emails, statistics).
    using Finish = std::function<error_code(Conn&, Batch&)>;

    // A lane for each connection.
    Writer(std::vector<Conn> conns, Finish finish);
    Writer(Conn conn, Finish finish);
    ~Writer();
    Writer(const Writer&) = delete;
    Writer& operator=(const Writer&) = delete;
    void start();
    // Runs what is pending, then stops; later submissions complete with errc::closed.
    void stop();
    void submit(Job job, Done done);
    // Completes once every job submitted before is answered (committed or failed); the lazy
    // ones among them go with the next batch, without waiting for their delay.
    asio::awaitable<Result<void>> drained() {
        return asio::async_initiate<const asio::use_awaitable_t<>&, void(Result<void>)>(
            DrainOp{this}, asio::use_awaitable);
    }
    // Whether `pid` is the process id of a lane's backend on the server (NOTIFYs carry it).
    bool owns_backend(int pid) const;
    // When the last job was submitted: how busy the node's writes are (the search indexer
    // waits for them to pause).
    std::chrono::steady_clock::time_point last_submit() const {
        return std::chrono::steady_clock::time_point(
            std::chrono::steady_clock::duration(last_submit_.load(std::memory_order_relaxed)));
    }

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
    struct DrainOp {
        Writer* writer;
        template <class Handler>
        void operator()(Handler handler) {
            auto h = std::make_shared<Handler>(std::move(handler));
            auto work = asio::make_work_guard(asio::get_associated_executor(*h));
            writer->barrier([h, work](error_code) mutable {
                asio::post(work.get_executor(), [h]() mutable { (*h)(Result<void>()); });
                work.reset();
            });
        }
    };
    void barrier(Done done);

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
        std::uint64_t seq = 0;  // the order of submission
    };
    // A barrier() waiting for `left` jobs submitted before the one numbered `seq`.
    struct Barrier {
        std::uint64_t seq;
        std::size_t left;
        Done done;
    };
    // A thread with its connection and the state of the batch it runs.
    struct Lane {
        explicit Lane(Conn c);
        Conn conn;
        Batch batch;
        std::atomic<int> backend_pid;
        std::thread thread;
    };
    void loop(Lane& lane);
    void run_batch(Lane& lane, std::vector<Pending>& batch);
    bool run_together(Lane& lane, std::vector<Pending>& batch);
    void run_apart(Lane& lane, std::vector<Pending>& batch);
    static error_code begin(Lane& lane);
    static error_code commit(Lane& lane);
    static void answer(std::vector<Pending>& batch, error_code ec);
    // Moves up to `room` pending jobs to the end of `batch`. Under mutex_.
    void take_pending(std::vector<Pending>& batch, std::size_t room);
    // Counts the batch's jobs as answered, and calls the barriers that waited for them.
    void answered(const std::vector<Pending>& batch);

    std::vector<std::unique_ptr<Lane>> lanes_;
    Finish finish_;
    std::mutex mutex_;
    std::condition_variable cv_;
    std::vector<Pending> pending_;  // guarded by mutex_: jobs somebody waits for
    std::vector<Pending> lazy_;     // guarded by mutex_: jobs nobody waits for
    std::chrono::steady_clock::time_point first_lazy_;  // guarded by mutex_
    std::size_t idle_ = 0;                              // guarded by mutex_: lanes waiting
    std::uint64_t next_seq_ = 0;                        // guarded by mutex_
    std::size_t unanswered_ = 0;                        // guarded by mutex_: jobs submitted
    std::vector<Barrier> barriers_;                     // guarded by mutex_
    bool hurry_ = false;                                // guarded by mutex_
    bool stopping_ = false;                             // guarded by mutex_
    bool closed_ = true;                                // guarded by mutex_: no lane takes work
    std::atomic<std::chrono::steady_clock::rep> last_submit_{0};  // last_submit()
};

}  // namespace posthorn::store::pg::detail
