// Checkpoints the WAL on a thread of its own, so that the writer never does.
//
// SQLite's automatic checkpoint runs inside the COMMIT that crosses 1000 WAL frames: the
// writer thread then copies pages into the database file and fsyncs it while every send
// waits (tens of milliseconds, several times a second under load: the p99 of a send). Here
// the writer's WAL hook only counts frames; this thread runs PASSIVE checkpoints (which
// never block the writer) when the WAL has grown past `threshold` frames, or once a second
// when it has any, and a RESTART checkpoint (which waits for the writer, once) only when
// the WAL has outgrown `limit` frames because passive ones could not keep up.
#pragma once

#include <condition_variable>
#include <mutex>
#include <thread>

#include "store/sqlite/detail/db.hpp"

namespace posthorn::store::sqlite::detail {

class Checkpointer {
  public:
    // `db`: a connection of its own. Installs the WAL hook on `writer` (which replaces
    // SQLite's automatic checkpoints there) and starts the thread.
    Checkpointer(Db db, sqlite3* writer, int threshold = 1000, int limit = 32768);
    ~Checkpointer();  // stops the thread (call it after the writer has stopped)
    Checkpointer(const Checkpointer&) = delete;
    Checkpointer& operator=(const Checkpointer&) = delete;

  private:
    static int on_commit(void* self, sqlite3*, const char*, int frames);
    void loop();

    Db db_;
    const int threshold_, limit_;
    std::mutex mutex_;
    std::condition_variable cv_;
    int frames_ = 0;  // in the WAL after the last commit (under mutex_)
    bool stop_ = false;
    std::thread thread_;
};

}  // namespace posthorn::store::sqlite::detail
