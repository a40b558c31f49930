#include "store/sqlite/detail/checkpointer.hpp"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <system_error>

#include "core/log.hpp"
#include "core/thread_name.hpp"

namespace posthorn::store::sqlite::detail {

Checkpointer::Checkpointer(Db db, sqlite3* writer, int restart, int threshold, int limit)
    : db_(std::move(db)), restart_at_(restart), threshold_(threshold), limit_(limit) {
    sqlite3_wal_hook(writer, &Checkpointer::on_commit, this);
    thread_ = std::thread([this] {
        core::name_this_thread("ph-checkpoint");
        // Background work: on a machine whose cores are all busy, the checkpointer yields
        // them to the writer and the network threads. At the same priority, a pass (a few
        // milliseconds of copying and syncing, every ~40 ms at half load) slowed the commits
        // it overlapped 4x (p90); at nice 10, 2x (bench/RESULTS.md, send_emails' notes).
        if (const int err = core::raise_this_thread_nice(kNiceIncrement); err != 0)
            log::warn("store: lowering the checkpointer's priority: {}",
                      std::generic_category().message(err));  // strerror is not thread-safe
        loop();
    });
}

Checkpointer::~Checkpointer() {
    {
        std::lock_guard lock(mutex_);
        stop_ = true;
    }
    cv_.notify_one();
    thread_.join();
}

int Checkpointer::on_commit(void* self, sqlite3*, const char*, int frames) {
    auto* c = static_cast<Checkpointer*>(self);
    bool wake = false;
    {
        std::lock_guard lock(c->mutex_);
        const bool before = c->added() >= c->threshold_;
        c->frames_ = frames;
        wake = !before && c->added() >= c->threshold_;
    }
    if (wake) c->cv_.notify_one();
    return SQLITE_OK;
}

void Checkpointer::loop() {
    std::unique_lock lock(mutex_);
    bool behind = false;  // the last pass left frames that were written while it ran
    for (;;) {
        // Behind on a long WAL: soon again, so that the WAL can start over (it does when a
        // writer finds every frame copied); else at the threshold, or once a second.
        const auto wait = behind ? std::chrono::milliseconds(10) : std::chrono::milliseconds(1000);
        cv_.wait_for(lock, wait, [this] { return stop_ || added() >= threshold_; });
        if (stop_) return;
        if (added() == 0 && !behind) continue;
        lock.unlock();
        int log = 0, done = 0;
        int rc = sqlite3_wal_checkpoint_v2(db_.handle(), nullptr, SQLITE_CHECKPOINT_PASSIVE, &log,
                                           &done);
        if (rc == SQLITE_OK && log > limit_) {
            // Passive checkpoints fell behind a writer that never pauses: copy everything
            // and start the WAL over, waiting for the writer once (its busy timeout).
            rc = sqlite3_wal_checkpoint_v2(db_.handle(), nullptr, SQLITE_CHECKPOINT_RESTART, &log,
                                           &done);
            log::info("store: WAL over {} frames: restart checkpoint ({} of {} frames)", limit_,
                      done, log);
        }
        if (rc != SQLITE_OK && rc != SQLITE_BUSY)
            log::warn("store: WAL checkpoint: {}", sqlite3_errmsg(db_.handle()));
        if (rc == SQLITE_OK && done > 0 && done != synced_) {
            sync_database();
            synced_ = done;
        }
        behind = rc == SQLITE_OK && log >= threshold_ && done < log;
        lock.lock();
        // What the pass copied; a commit since then may have restarted the WAL (frames_ below
        // `done`), which added() reads as all new.
        if (rc == SQLITE_OK) copied_ = done;
        restart_ = rc == SQLITE_OK && log >= restart_at_ && done == log;
    }
}

// SQLite syncs the database file only at the end of a checkpoint that copied the whole WAL
// (only then may the WAL start over); a pass that a busy writer outran leaves its pages to
// the kernel. Those added up to megabytes over scattered pages, all written out by the one
// fdatasync of the writer's own copy in between_batches(): 8 to 15 ms with every send
// waiting (the p99 at half load on a database of a million emails), where here, after each
// pass, a sync costs no send anything.
void Checkpointer::sync_database() {
    sqlite3_file* file = nullptr;
    if (sqlite3_file_control(db_.handle(), "main", SQLITE_FCNTL_FILE_POINTER, &file) != SQLITE_OK ||
        file == nullptr || file->pMethods == nullptr)
        return;
    if (const int rc = file->pMethods->xSync(file, SQLITE_SYNC_NORMAL); rc != SQLITE_OK)
        log::warn("store: syncing the database file after a checkpoint: {}", sqlite3_errstr(rc));
}

void Checkpointer::between_batches(sqlite3* writer, bool idle) {
    {
        std::lock_guard lock(mutex_);
        if (!restart_ || (!idle && frames_ < restart_at_ + restart_at_ / 2)) return;
        restart_ = false;  // once per pass: a reader may keep the WAL from starting over
    }
    // Copies the frames committed since the pass (busy if a pass is running: then not now).
    sqlite3_wal_checkpoint_v2(writer, nullptr, SQLITE_CHECKPOINT_PASSIVE, nullptr, nullptr);
}

}  // namespace posthorn::store::sqlite::detail
