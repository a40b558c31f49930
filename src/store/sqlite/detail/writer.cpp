#include "store/sqlite/detail/writer.hpp"

#include "core/log.hpp"
#include "core/thread_name.hpp"

namespace posthorn::store::sqlite::detail {
namespace {
constexpr std::size_t kMaxBatch = 2048;
}

Writer::Writer(Db db, std::chrono::microseconds gather_window)
    : db_(std::move(db)), gather_window_(gather_window) {}

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

void Writer::expect() {
    std::lock_guard lock(mutex_);
    ++expected_;
}

void Writer::unexpect() {
    {
        std::lock_guard lock(mutex_);
        if (expected_ > 0) --expected_;
    }
    cv_.notify_one();  // a batch may be waiting for it
}

void Writer::submit(Job job, Done done, bool expected) {
    {
        std::lock_guard lock(mutex_);
        if (expected && expected_ > 0) --expected_;
        if (!closed_) {
            const auto now = std::chrono::steady_clock::now();
            if (pending_.empty()) first_pending_ = now;
            // Wake the writer when it has something new to decide: a first job, a first
            // awaited one, or the last of the announced ones.
            bool wake = pending_.empty();
            if (done && awaited_++ == 0) {
                first_awaited_ = now;
                wake = true;
            }
            if (done && expected_ == 0) wake = true;
            pending_.push_back({std::move(job), std::move(done)});
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
            for (;;) {
                if (stopping_) break;
                if (awaited_ > 0) {
                    // Jobs on their way: hold the commit for them, up to the gather window
                    // after the first awaited job came.
                    if (expected_ == 0 || cv_.wait_until(lock, first_awaited_ + gather_window_) ==
                                              std::cv_status::timeout)
                        break;
                } else if (pending_.empty()) {
                    if (between_) {  // idle: a moment for work that would hold up a batch
                        lock.unlock();
                        between_(db_, true);
                        lock.lock();
                        if (!pending_.empty() || stopping_) continue;
                    }
                    cv_.wait(lock);
                } else if (cv_.wait_until(lock, first_pending_ + kLazyDelay) ==
                           std::cv_status::timeout) {
                    break;  // only lazy jobs, and the oldest has waited long enough
                }
            }
            if (pending_.empty()) {
                if (!stopping_) continue;
                closed_ = true;  // stopping, and everything ran
                return;
            }
            if (pending_.size() <= kMaxBatch) {
                batch.swap(pending_);
            } else {
                auto split = pending_.begin() + static_cast<std::ptrdiff_t>(kMaxBatch);
                batch.assign(std::make_move_iterator(pending_.begin()),
                             std::make_move_iterator(split));
                pending_.erase(pending_.begin(), split);
            }
            awaited_ = 0;
            for (const auto& p : pending_)
                if (p.done) ++awaited_;
            first_pending_ = first_awaited_ = std::chrono::steady_clock::now();
        }
        run_batch(batch);
        batch.clear();
    }
}

void Writer::run_batch(std::vector<Pending>& batch) {
    std::vector<error_code> results(batch.size());
    auto fail_all = [&](error_code ec) {
        for (auto& p : batch)
            if (p.done) p.done(ec);
    };
    if (between_) between_(db_, false);
    if (auto r = db_.exec("BEGIN IMMEDIATE"); !r) return fail_all(r.error());
    const bool savepoints = batch.size() > 1;
    // Prepared once (the statement cache), not parsed again for every job.
    auto statement = [this](const char* sql) {
        if (auto st = db_.prepare(sql)) (void)st->run();
    };
    for (std::size_t i = 0; i < batch.size(); ++i) {
        if (savepoints) statement("SAVEPOINT job");
        results[i] = batch[i].job(db_);
        if (savepoints) {
            if (results[i]) statement("ROLLBACK TO job");
            statement("RELEASE job");
        }
    }
    if (!savepoints && results[0]) {
        (void)db_.exec("ROLLBACK");
        return fail_all(results[0]);
    }
    if (auto r = db_.exec("COMMIT"); !r) {
        log::error("group commit of {} writes failed: {}", batch.size(), r.error().message());
        (void)db_.exec("ROLLBACK");
        return fail_all(r.error());
    }
    for (std::size_t i = 0; i < batch.size(); ++i)
        if (batch[i].done) batch[i].done(results[i]);
}

}  // namespace posthorn::store::sqlite::detail
