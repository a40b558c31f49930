// Checkpoints the WAL on a thread of its own, so that the writer never does.
//
// SQLite's automatic checkpoint runs inside the COMMIT that crosses 1000 WAL frames: the
// writer thread then copies pages into the database file and fsyncs it while every send
// waits (tens of milliseconds, several times a second under load: the p99 of a send). Here
// the writer's WAL hook only counts frames; this thread runs PASSIVE checkpoints (which
// never block the writer) when `threshold` frames have been added since the last one, or
// once a second when there are any, and a RESTART checkpoint (which waits for the writer,
// once) only when the WAL has outgrown `limit` frames because passive ones could not keep
// up. Counting the frames added (not the WAL's length) matters: a WAL stays long until it
// starts over, and a checkpoint per commit (each with an fsync of the database, each
// copying the same hot pages again) would cost more than the commits themselves.
//
// A WAL starts over only at a write transaction that begins with every frame copied, which
// a busy writer seldom finds: it begins its next batch while this thread is still copying.
// So after a pass over a WAL of `restart` frames or more, the writer copies what the pass
// left itself, once, the next time it runs out of work (between_batches()), and its next
// batch starts the WAL over; else the WAL would grow until the RESTART checkpoint. That copy
// costs the writer two fsyncs (WAL and database), a millisecond or more: not after every
// pass (with `restart` at 4000 frames instead of 16000, the p99 of a send at half load was
// 1.5x longer), and not ahead of a waiting batch unless the writer never runs out of work
// and the WAL has reached 1.5 x `restart` frames.
//
// SQLite syncs the database file only at the end of a checkpoint that copied the whole WAL;
// this thread syncs it after each pass that copied frames (sync_database()), so that the
// writer's copy has only its own pages to write out.
#pragma once

#include <condition_variable>
#include <mutex>
#include <thread>

#include "store/sqlite/detail/db.hpp"

namespace posthorn::store::sqlite::detail {

class Checkpointer {
  public:
    // Added to the thread's nice value (see the thread's start): background work.
    static constexpr int kNiceIncrement = 10;

    // `db`: a connection of its own. Installs the WAL hook on `writer` (which replaces
    // SQLite's automatic checkpoints there) and starts the thread.
    Checkpointer(Db db, sqlite3* writer, int restart = 16000, int threshold = 1000,
                 int limit = 32768);
    ~Checkpointer();  // stops the thread (call it after the writer has stopped)
    // Called by the writer, on its thread, between its batches (see above).
    void between_batches(sqlite3* writer, bool idle);
    Checkpointer(const Checkpointer&) = delete;
    Checkpointer& operator=(const Checkpointer&) = delete;

  private:
    static int on_commit(void* self, sqlite3*, const char*, int frames);
    void loop();
    void sync_database();  // the pages a pass copied, written out off the writer's thread

    Db db_;
    const int restart_at_, threshold_, limit_;
    std::mutex mutex_;
    std::condition_variable cv_;
    int frames_ = 0;        // in the WAL after the last commit (under mutex_)
    int copied_ = 0;        // of those, copied by the last checkpoint (under mutex_)
    bool restart_ = false;  // a pass over a long WAL ended: the writer may finish (mutex_)
    int added() const { return frames_ >= copied_ ? frames_ - copied_ : frames_; }  // restarted
    int synced_ = 0;  // the frames copied when the thread last synced the database
    bool stop_ = false;
    std::thread thread_;
};

}  // namespace posthorn::store::sqlite::detail
