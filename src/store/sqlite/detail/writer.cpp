#include "store/sqlite/detail/writer.hpp"

#include "core/log.hpp"
#include "core/thread_name.hpp"
#include "store/detail/commit_metrics.hpp"
#include "store/sqlite/detail/events.hpp"

namespace posthorn::store::sqlite::detail {
namespace {
constexpr std::size_t kMaxBatch = 2048;
}

Writer::Writer(Db db, std::chrono::microseconds gather_window, std::chrono::milliseconds lazy_delay)
    : db_(std::move(db)),
      gather_window_(gather_window),
      lazy_delay_(lazy_delay),
      mean_gap_(gather_window * 4) {}

Writer::~Writer() { stop(); }

void Writer::start() {
    {
        std::lock_guard lock(mutex_);
        closed_ = false;
    }
    thread_ = std::thread([this] {
        core::name_this_thread("ph-writer");
        loop();
    });
}

void Writer::stop() {
    {
        std::lock_guard lock(mutex_);
        stopping_ = true;
    }
    cv_.notify_all();
    if (thread_.joinable()) thread_.join();
}

void Writer::hurry_lazy() {
    {
        std::lock_guard lock(mutex_);
        hurry_ = true;
    }
    cv_.notify_one();
}

void Writer::submit(Job job, Done done) {
    {
        std::lock_guard lock(mutex_);
        if (!closed_) {
            const auto now = std::chrono::steady_clock::now();
            // Wake the writer when it has something new: a first awaited job (the writer
            // takes them all at once, so an empty queue means it has not seen this one), or a
            // first lazy one (its clock starts).
            bool wake = false;
            if (done) {
                // A gap counts up to four windows: one quiet spell stops the holding at once,
                // and a dozen jobs close together start it again.
                using std::chrono::microseconds;
                const auto gap = std::min<microseconds>(
                    std::chrono::duration_cast<microseconds>(now - last_arrival_),
                    gather_window_ * 4);
                mean_gap_ = (mean_gap_ * 7 + gap) / 8;
                last_arrival_ = now;
                if (pending_.empty()) first_awaited_ = now;
                wake = pending_.empty();
                pending_.push_back({std::move(job), std::move(done)});
            } else {
                if (lazy_.empty()) first_lazy_ = now;
                wake = lazy_.empty();
                lazy_.push_back({std::move(job), {}});
            }
            if (wake) cv_.notify_one();
            return;
        }
    }
    if (done) done(errc::closed);
}

void Writer::loop() {
    std::vector<Pending> batch;
    for (;;) {
        {
            std::unique_lock lock(mutex_);
            bool lazy_go = false;
            for (;;) {
                const auto now = std::chrono::steady_clock::now();
                lazy_go =
                    stopping_ || (!lazy_.empty() && (hurry_ || now >= first_lazy_ + lazy_delay_));
                if (stopping_ || !pending_.empty() || lazy_go) break;
                if (between_) {  // no batch waiting: a moment for work that would hold one up
                    lock.unlock();
                    between_(db_, true);
                    lock.lock();
                    if (!pending_.empty() || stopping_) continue;
                }
                if (lazy_.empty())
                    cv_.wait(lock);
                else
                    cv_.wait_until(lock, first_lazy_ + lazy_delay_);
            }
            if (lazy_go) batch.swap(lazy_);  // the lazy jobs first: they are the older
            hurry_ = false;
            if (pending_.empty() && batch.empty()) {
                if (!stopping_) continue;
                closed_ = true;  // stopping, and everything ran
                return;
            }
            take_pending(batch);
        }
        run_batch(batch);
        batch.clear();
    }
}

// Moves awaited jobs into the batch, up to kMaxBatch; the first that joins it starts the
// gather window. Called with mutex_ held.
void Writer::take_pending(std::vector<Pending>& batch) {
    const auto room = kMaxBatch > batch.size() ? kMaxBatch - batch.size() : 0;
    const auto take = std::min(room, pending_.size());
    if (take == 0) return;
    if (!gathering_) {
        gathering_ = true;
        gather_until_ = first_awaited_ + gather_window_;
    }
    auto split = pending_.begin() + static_cast<std::ptrdiff_t>(take);
    batch.insert(batch.end(), std::make_move_iterator(pending_.begin()),
                 std::make_move_iterator(split));
    pending_.erase(pending_.begin(), split);
}

void Writer::run_batch(std::vector<Pending>& batch) {
    if (between_) between_(db_, false);
    if (!run_together(batch)) run_apart(batch);
    gathering_ = false;
}

// Every job in one transaction without a savepoint each (two statements a job less: a
// tenth of the writer's work for a batch of sends), each job run as soon as it is taken:
// while awaited jobs come close together (see writer.hpp), the jobs that arrive meanwhile
// join the open transaction and run at once, so that only the last one's work and the
// COMMIT are left when the batch closes. True once the batch is settled; false, with the
// transaction rolled back and nobody answered, when a job failed (jobs are functions of the
// database and what they hold, so they can run again): run_apart() then runs them again, each in a
// savepoint, so that the one failing does not undo the others.
bool Writer::run_together(std::vector<Pending>& batch) {
    // Once a job has failed, the transaction is rolled back and no more jobs run, but the
    // batch still takes the jobs on their way, so that they run apart with it and share its
    // commit as they would have.
    const bool began = static_cast<bool>(db_.run("BEGIN IMMEDIATE"));
    error_code failed = began ? error_code{} : make_error_code(errc::io);
    std::size_t ran = 0;
    for (;;) {
        for (; !failed && ran < batch.size(); ++ran) {
            failed = batch[ran].job(db_);
            if (failed) roll_back();
        }
        std::unique_lock lock(mutex_);
        if (!pending_.empty() && batch.size() < kMaxBatch) {
            take_pending(batch);
            continue;
        }
        // Jobs coming close together: hold the commit for the next, up to twice their mean
        // gap after the last and the gather window after the first. A batch of lazy jobs
        // alone waits for nothing.
        if (stopping_ || !gathering_ || batch.size() >= kMaxBatch ||
            mean_gap_ * 2 >= gather_window_)
            break;
        const auto until = std::min(gather_until_, last_arrival_ + mean_gap_ * 2);
        if (cv_.wait_until(lock, until) == std::cv_status::timeout && pending_.empty()) break;
    }
    if (failed) {
        if (!began || batch.size() > 1) return false;
        if (batch[0].done) batch[0].done(failed);  // alone: nothing else to keep, no rerun
        return true;
    }
    const auto committed = commit(batch.size());
    for (auto& p : batch)
        if (p.done) p.done(committed);
    return true;
}

// ROLLBACK of the open transaction, and what its jobs left to write at its end forgotten.
void Writer::roll_back() {
    (void)db_.exec("ROLLBACK");
    db_.pending_stats().clear();
}

// The jobs' statistics counters, summed, then COMMIT; a failure of either is logged and rolled
// back, and fails every job of the batch.
error_code Writer::commit(std::size_t jobs) {
    if (auto ec = write_pending_stats(db_)) {
        log::error("group commit of {} writes: the statistics counters could not be written: {}",
                   jobs, ec.message());
        roll_back();
        return ec;
    }
    const auto started = std::chrono::steady_clock::now();
    auto r = db_.run("COMMIT");
    store::detail::observe_commit(std::chrono::steady_clock::now() - started);
    if (r) return {};
    log::error("group commit of {} writes failed: {}", jobs, r.error().message());
    roll_back();
    return r.error();
}

void Writer::run_apart(std::vector<Pending>& batch) {
    std::vector<error_code> results(batch.size());
    auto fail_all = [&](error_code ec) {
        for (auto& p : batch)
            if (p.done) p.done(ec);
    };
    if (auto r = db_.run("BEGIN IMMEDIATE"); !r) return fail_all(r.error());
    const bool savepoints = batch.size() > 1;
    for (std::size_t i = 0; i < batch.size(); ++i) {
        if (savepoints) (void)db_.run("SAVEPOINT job");
        const auto asked = db_.pending_stats().size();
        results[i] = batch[i].job(db_);
        if (savepoints) {
            if (results[i]) {
                (void)db_.run("ROLLBACK TO job");
                db_.pending_stats().resize(asked);  // a job undone adds to no counter
            }
            (void)db_.run("RELEASE job");
        }
    }
    if (!savepoints && results[0]) {
        roll_back();
        return fail_all(results[0]);
    }
    if (auto ec = commit(batch.size())) return fail_all(ec);
    for (std::size_t i = 0; i < batch.size(); ++i)
        if (batch[i].done) batch[i].done(results[i]);
}

}  // namespace posthorn::store::sqlite::detail
