#include "store/sqlite/detail/writer.hpp"

#include "core/log.hpp"
#include "core/thread_name.hpp"

namespace posthorn::store::sqlite::detail {
namespace {
constexpr std::size_t kMaxBatch = 2048;
}

Writer::Writer(Db db) : db_(std::move(db)) {}

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

void Writer::submit(Job job, Done done) {
    {
        std::lock_guard lock(mutex_);
        if (!closed_) {
            pending_.push_back({std::move(job), std::move(done)});
            cv_.notify_one();
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
            cv_.wait(lock, [this] { return stopping_ || !pending_.empty(); });
            if (pending_.empty()) {  // stopping, and everything ran
                closed_ = true;
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
    if (auto r = db_.exec("BEGIN IMMEDIATE"); !r) return fail_all(r.error());
    const bool savepoints = batch.size() > 1;
    for (std::size_t i = 0; i < batch.size(); ++i) {
        if (savepoints) (void)db_.exec("SAVEPOINT job");
        results[i] = batch[i].job(db_);
        if (savepoints) {
            if (results[i]) (void)db_.exec("ROLLBACK TO job");
            (void)db_.exec("RELEASE job");
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
