#include "store/pg/detail/writer.hpp"

#include <algorithm>

#include "core/log.hpp"
#include "core/thread_name.hpp"
#include "store/detail/commit_metrics.hpp"

namespace posthorn::store::pg::detail {
namespace {
constexpr int kTries = 3;  // transactions a job that meets deadlocks runs in, at most
}

void Batch::notify(const char* channel) {
    if (std::find(channels_.begin(), channels_.end(), channel) == channels_.end())
        channels_.push_back(channel);
}

void Batch::add_stats(const std::vector<StatBump>& bumps) {
    stats_.insert(stats_.end(), bumps.begin(), bumps.end());
}

void Batch::undo(Mark m) {
    channels_.resize(std::min(m.channels, channels_.size()));
    stats_.resize(std::min(m.stats, stats_.size()));
}

Writer::Writer(Conn conn, Finish finish)
    : conn_(std::move(conn)),
      finish_(std::move(finish)),
      backend_pid_(PQbackendPID(conn_.handle())) {}

Writer::~Writer() { stop(); }

void Writer::start() {
    {
        std::lock_guard lock(mutex_);
        closed_ = false;
    }
    thread_ = std::thread([this] {
        core::name_this_thread("ph-pg-writer");
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
            // Wake the writer for a first awaited job, or a first lazy one (its clock starts).
            bool wake = false;
            if (done) {
                wake = pending_.empty();
                pending_.push_back({std::move(job), std::move(done)});
            } else {
                if (lazy_.empty()) first_lazy_ = std::chrono::steady_clock::now();
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
                    stopping_ || (!lazy_.empty() && (hurry_ || now >= first_lazy_ + kLazyDelay));
                if (stopping_ || !pending_.empty() || lazy_go) break;
                if (lazy_.empty())
                    cv_.wait(lock);
                else
                    cv_.wait_until(lock, first_lazy_ + kLazyDelay);
            }
            if (lazy_go) batch.swap(lazy_);  // the lazy jobs first: they are the older
            hurry_ = false;
            if (pending_.empty() && batch.empty()) {
                if (!stopping_) continue;
                closed_ = true;  // stopping, and everything ran
                return;
            }
            const auto take = std::min(kMaxBatch, pending_.size());
            auto split = pending_.begin() + static_cast<std::ptrdiff_t>(take);
            batch.insert(batch.end(), std::make_move_iterator(pending_.begin()),
                         std::make_move_iterator(split));
            pending_.erase(pending_.begin(), split);
        }
        run_batch(batch);
        batch.clear();
    }
}

void Writer::answer(std::vector<Pending>& batch, error_code ec) {
    for (auto& p : batch)
        if (p.done) p.done(ec);
}

void Writer::run_batch(std::vector<Pending>& batch) {
    batch_state_.clear();
    if (!run_together(batch)) run_apart(batch);
}

// BEGIN, on a connection made again if it is found broken (a restart of the server since the
// last batch): nothing of the batch has run yet, so it can go on a new one.
error_code Writer::begin() {
    if (conn_.ok()) {
        auto r = conn_.run("BEGIN");
        if (r || conn_.ok()) return r.error();
    }
    if (auto r = conn_.reconnect(); !r) return r.error();
    backend_pid_ = PQbackendPID(conn_.handle());
    return conn_.run("BEGIN").error();
}

// Every job in one transaction, each run as soon as it is taken: jobs that arrive meanwhile
// join the open transaction. True once the batch is settled; false, with the transaction
// rolled back and nobody answered, when a job failed and the batch is to run apart.
bool Writer::run_together(std::vector<Pending>& batch) {
    conn_.allow_pipeline(true);
    if (auto ec = begin()) {
        answer(batch, ec);
        return true;
    }
    const auto until = std::chrono::steady_clock::now() + kGatherFor;
    std::size_t ran = 0;
    error_code failed;
    for (;;) {
        for (; ran < batch.size(); ++ran) {
            failed = batch[ran].job(conn_, batch_state_);
            if (failed) break;
        }
        if (failed) break;
        std::lock_guard lock(mutex_);
        if (pending_.empty() || batch.size() >= kMaxBatch ||
            std::chrono::steady_clock::now() >= until)
            break;
        const auto take = std::min(kMaxBatch - batch.size(), pending_.size());
        auto split = pending_.begin() + static_cast<std::ptrdiff_t>(take);
        batch.insert(batch.end(), std::make_move_iterator(pending_.begin()),
                     std::make_move_iterator(split));
        pending_.erase(pending_.begin(), split);
    }
    if (!failed && finish_) failed = finish_(conn_, batch_state_);
    // The statements the jobs queued without waiting (Conn::queue): their outcome.
    if (!failed) failed = conn_.sync();
    if (failed) {
        (void)conn_.run("ROLLBACK");
        batch_state_.clear();
        if (!conn_.ok()) {
            answer(batch, errc::unavailable);
            return true;
        }
        // Alone and not worth another try: its answer is the failure.
        if (batch.size() == 1 && failed != errc::busy) {
            answer(batch, failed);
            return true;
        }
        return false;
    }
    answer(batch, commit());
    return true;
}

// COMMIT, with the NOTIFYs the batch's jobs asked for (delivered when it is done); a failed
// one is logged and fails every job of the batch.
error_code Writer::commit() {
    std::string sql;
    for (const char* channel : batch_state_.channels())
        sql += std::string("NOTIFY ") + channel + ";";
    sql += "COMMIT";
    batch_state_.clear();
    const auto started = std::chrono::steady_clock::now();
    auto r = conn_.run(sql.c_str());
    store::detail::observe_commit(std::chrono::steady_clock::now() - started);
    if (r) return {};
    log::error("store: a group commit failed: {}", r.error().message());
    if (conn_.ok()) (void)conn_.run("ROLLBACK");
    return r.error();
}

// Each job in a savepoint of its own and each statement's outcome known at once (no pipeline),
// so that a failure is its own job's. A job that meets a
// deadlock is not run again in the same transaction: that still holds the locks the other jobs
// took, which the other side of the deadlock waits for, so it would meet the same deadlock again.
// It goes to a next transaction, after this one's COMMIT has let the other side go on.
void Writer::run_apart(std::vector<Pending>& batch) {
    conn_.allow_pipeline(false);
    std::vector<std::size_t> todo(batch.size());
    for (std::size_t i = 0; i < todo.size(); ++i) todo[i] = i;
    std::vector<error_code> results(batch.size());
    const auto answer_these = [&](const std::vector<std::size_t>& which, error_code ec) {
        for (auto i : which)
            if (batch[i].done) batch[i].done(ec);
    };
    for (int round = 1; !todo.empty(); ++round) {
        if (auto ec = begin()) return answer_these(todo, ec);
        std::vector<std::size_t> again;  // met a deadlock: to run after this COMMIT
        for (auto i : todo) {
            if (auto r = conn_.run("SAVEPOINT job"); !r) {
                results[i] = r.error();
            } else {
                // What a job asks of the batch (NOTIFYs, counters) counts only if it is kept.
                const auto mark = batch_state_.mark();
                results[i] = batch[i].job(conn_, batch_state_);
                if (!results[i]) {
                    (void)conn_.run("RELEASE SAVEPOINT job");
                } else {
                    (void)conn_.run("ROLLBACK TO SAVEPOINT job");
                    (void)conn_.run("RELEASE SAVEPOINT job");
                    batch_state_.undo(mark);
                    if (results[i] == errc::busy && round < kTries) again.push_back(i);
                }
            }
            if (!conn_.ok()) return answer_these(todo, errc::unavailable);
        }
        if (finish_) {
            if (auto ec = finish_(conn_, batch_state_)) {
                log::error("store: a batch's last statement failed: {}", ec.message());
                (void)conn_.run("ROLLBACK");
                batch_state_.clear();
                return answer_these(todo, conn_.ok() ? ec : make_error_code(errc::unavailable));
            }
        }
        if (auto ec = commit()) return answer_these(todo, ec);
        for (auto i : todo)
            if (batch[i].done && std::find(again.begin(), again.end(), i) == again.end())
                batch[i].done(results[i]);
        todo = std::move(again);
    }
}

}  // namespace posthorn::store::pg::detail
