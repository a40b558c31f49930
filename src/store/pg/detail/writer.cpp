#include "store/pg/detail/writer.hpp"

#include <algorithm>

#include "core/log.hpp"
#include "core/thread_name.hpp"
#include "store/detail/commit_metrics.hpp"

namespace posthorn::store::pg::detail {
namespace {
constexpr int kTries = 3;  // transactions a job that meets deadlocks runs in, at most

std::vector<Conn> one_conn(Conn conn) {
    std::vector<Conn> v;
    v.push_back(std::move(conn));
    return v;
}
}  // namespace

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
    emails_.resize(std::min(m.emails, emails_.size()));
}

Writer::Lane::Lane(Conn c) : conn(std::move(c)), backend_pid(PQbackendPID(conn.handle())) {}

Writer::Writer(std::vector<Conn> conns, Finish finish) : finish_(std::move(finish)) {
    for (auto& c : conns) lanes_.push_back(std::make_unique<Lane>(std::move(c)));
}

Writer::Writer(Conn conn, Finish finish) : Writer(one_conn(std::move(conn)), std::move(finish)) {}

Writer::~Writer() { stop(); }

bool Writer::owns_backend(int pid) const {
    return std::any_of(lanes_.begin(), lanes_.end(), [pid](const auto& lane) {
        return lane->backend_pid.load(std::memory_order_relaxed) == pid;
    });
}

void Writer::start() {
    {
        std::lock_guard lock(mutex_);
        closed_ = false;
    }
    for (std::size_t i = 0; i < lanes_.size(); ++i) {
        Lane& lane = *lanes_[i];
        lane.thread = std::thread([this, &lane, i] {
            const auto name = "ph-pg-writer" + (i == 0 ? std::string() : std::to_string(i + 1));
            core::name_this_thread(name.c_str());
            loop(lane);
        });
    }
}

void Writer::stop() {
    {
        std::lock_guard lock(mutex_);
        stopping_ = true;
    }
    cv_.notify_all();
    for (auto& lane : lanes_)
        if (lane->thread.joinable()) lane->thread.join();
}

void Writer::barrier(Done done) {
    {
        std::lock_guard lock(mutex_);
        if (unanswered_ > 0) {
            barriers_.push_back({next_seq_, unanswered_, std::move(done)});
            hurry_ = true;
            if (idle_ > 0) cv_.notify_one();
            return;
        }
    }
    done(error_code{});
}

void Writer::answered(const std::vector<Pending>& batch) {
    std::vector<Done> ready;
    {
        std::lock_guard lock(mutex_);
        unanswered_ -= batch.size();
        for (auto it = barriers_.begin(); it != barriers_.end();) {
            for (const auto& p : batch)
                if (p.seq < it->seq) --it->left;
            if (it->left == 0) {
                ready.push_back(std::move(it->done));
                it = barriers_.erase(it);
            } else {
                ++it;
            }
        }
    }
    for (auto& done : ready) done(error_code{});
}

void Writer::submit(Job job, Done done) {
    last_submit_.store(std::chrono::steady_clock::now().time_since_epoch().count(),
                       std::memory_order_relaxed);
    {
        std::lock_guard lock(mutex_);
        if (!closed_) {
            ++unanswered_;
            const auto seq = next_seq_++;
            // Wake a waiting lane for an awaited job, or for a first lazy one (its clock
            // starts).
            bool wake = false;
            if (done) {
                wake = idle_ > 0;
                pending_.push_back({std::move(job), std::move(done), seq});
            } else {
                if (lazy_.empty()) first_lazy_ = std::chrono::steady_clock::now();
                wake = lazy_.empty() && idle_ > 0;
                lazy_.push_back({std::move(job), {}, seq});
            }
            if (wake) cv_.notify_one();
            return;
        }
    }
    if (done) done(errc::closed);
}

void Writer::take_pending(std::vector<Pending>& batch, std::size_t room) {
    const auto take = std::min(room, pending_.size());
    auto split = pending_.begin() + static_cast<std::ptrdiff_t>(take);
    batch.insert(batch.end(), std::make_move_iterator(pending_.begin()),
                 std::make_move_iterator(split));
    pending_.erase(pending_.begin(), split);
}

void Writer::loop(Lane& lane) {
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
                ++idle_;
                if (lazy_.empty())
                    cv_.wait(lock);
                else
                    cv_.wait_until(lock, first_lazy_ + kLazyDelay);
                --idle_;
            }
            if (lazy_go) batch.swap(lazy_);  // the lazy jobs first: they are the older
            hurry_ = false;
            if (pending_.empty() && batch.empty()) {
                if (!stopping_) continue;
                closed_ = true;  // stopping, and everything ran
                return;
            }
            take_pending(batch, kMaxBatch);
            // More than one lane's worth waits: wake another lane for it.
            if (!pending_.empty() && idle_ > 0) cv_.notify_one();
        }
        run_batch(lane, batch);
        answered(batch);
        batch.clear();
    }
}

void Writer::answer(std::vector<Pending>& batch, error_code ec) {
    for (auto& p : batch)
        if (p.done) p.done(ec);
}

void Writer::run_batch(Lane& lane, std::vector<Pending>& batch) {
    lane.batch.clear();
    if (!run_together(lane, batch)) run_apart(lane, batch);
}

// BEGIN, on a connection made again if it is found broken (a restart of the server since the
// last batch): nothing of the batch has run yet, so it can go on a new one.
error_code Writer::begin(Lane& lane) {
    if (lane.conn.ok()) {
        auto r = lane.conn.run("BEGIN");
        if (r || lane.conn.ok()) return r.error();
    }
    if (auto r = lane.conn.reconnect(); !r) return r.error();
    lane.backend_pid = PQbackendPID(lane.conn.handle());
    return lane.conn.run("BEGIN").error();
}

// Every job in one transaction, each run as soon as it is taken: jobs that arrive meanwhile
// join the open transaction. True once the batch is settled; false, with the transaction
// rolled back and nobody answered, when a job failed and the batch is to run apart.
bool Writer::run_together(Lane& lane, std::vector<Pending>& batch) {
    lane.conn.allow_pipeline(true);
    if (auto ec = begin(lane)) {
        answer(batch, ec);
        return true;
    }
    const auto until = std::chrono::steady_clock::now() + kGatherFor;
    std::size_t ran = 0;
    error_code failed;
    for (;;) {
        for (; ran < batch.size(); ++ran) {
            failed = batch[ran].job(lane.conn, lane.batch);
            if (failed) break;
        }
        if (failed) break;
        std::lock_guard lock(mutex_);
        if (pending_.empty() || batch.size() >= kMaxBatch ||
            std::chrono::steady_clock::now() >= until)
            break;
        take_pending(batch, kMaxBatch - batch.size());
    }
    if (!failed && finish_) failed = finish_(lane.conn, lane.batch);
    // The statements the jobs queued without waiting (Conn::queue): their outcome.
    if (!failed) failed = lane.conn.sync();
    if (failed) {
        (void)lane.conn.run("ROLLBACK");
        lane.batch.clear();
        if (!lane.conn.ok()) {
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
    answer(batch, commit(lane));
    return true;
}

// COMMIT, with the NOTIFYs the batch's jobs asked for (delivered when it is done); a failed
// one is logged and fails every job of the batch.
error_code Writer::commit(Lane& lane) {
    std::string sql;
    for (const char* channel : lane.batch.channels()) sql += std::string("NOTIFY ") + channel + ";";
    sql += "COMMIT";
    lane.batch.clear();
    const auto started = std::chrono::steady_clock::now();
    auto r = lane.conn.run(sql.c_str());
    store::detail::observe_commit(std::chrono::steady_clock::now() - started);
    if (r) return {};
    log::error("store: a group commit failed: {}", r.error().message());
    if (lane.conn.ok()) (void)lane.conn.run("ROLLBACK");
    return r.error();
}

// Each job in a savepoint of its own and each statement's outcome known at once (no pipeline),
// so that a failure is its own job's. A job that meets a
// deadlock is not run again in the same transaction: that still holds the locks the other jobs
// took, which the other side of the deadlock waits for, so it would meet the same deadlock again.
// It goes to a next transaction, after this one's COMMIT has let the other side go on.
void Writer::run_apart(Lane& lane, std::vector<Pending>& batch) {
    lane.conn.allow_pipeline(false);
    std::vector<std::size_t> todo(batch.size());
    for (std::size_t i = 0; i < todo.size(); ++i) todo[i] = i;
    std::vector<error_code> results(batch.size());
    const auto answer_these = [&](const std::vector<std::size_t>& which, error_code ec) {
        for (auto i : which)
            if (batch[i].done) batch[i].done(ec);
    };
    for (int round = 1; !todo.empty(); ++round) {
        if (auto ec = begin(lane)) return answer_these(todo, ec);
        std::vector<std::size_t> again;  // met a deadlock: to run after this COMMIT
        for (auto i : todo) {
            if (auto r = lane.conn.run("SAVEPOINT job"); !r) {
                results[i] = r.error();
            } else {
                // What a job asks of the batch (NOTIFYs, counters) counts only if it is kept.
                const auto mark = lane.batch.mark();
                results[i] = batch[i].job(lane.conn, lane.batch);
                if (!results[i]) {
                    (void)lane.conn.run("RELEASE SAVEPOINT job");
                } else {
                    (void)lane.conn.run("ROLLBACK TO SAVEPOINT job");
                    (void)lane.conn.run("RELEASE SAVEPOINT job");
                    lane.batch.undo(mark);
                    if (results[i] == errc::busy && round < kTries) again.push_back(i);
                }
            }
            if (!lane.conn.ok()) return answer_these(todo, errc::unavailable);
        }
        if (finish_) {
            if (auto ec = finish_(lane.conn, lane.batch)) {
                log::error("store: a batch's last statement failed: {}", ec.message());
                (void)lane.conn.run("ROLLBACK");
                lane.batch.clear();
                return answer_these(todo, lane.conn.ok() ? ec : make_error_code(errc::unavailable));
            }
        }
        if (auto ec = commit(lane)) return answer_these(todo, ec);
        for (auto i : todo)
            if (batch[i].done && std::find(again.begin(), again.end(), i) == again.end())
                batch[i].done(results[i]);
        todo = std::move(again);
    }
}

}  // namespace posthorn::store::pg::detail
