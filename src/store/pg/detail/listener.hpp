// The LISTEN side of LISTEN/NOTIFY: a thread with a connection of its own that listens on
// the store's channels and calls their callbacks when a commit of any node notifies them
// (the writer sends the NOTIFYs with its COMMIT: writer.hpp). A notification from a process
// `own` answers true for (this store's writer's) is skipped: the store calls its listeners itself,
// after the commit, on the caller's executor. The connection is made again when it is lost (each
// second until it is back), and the callbacks are called once then, since notifications sent
// meanwhile are lost. Private to store/pg.
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "store/pg/detail/conn.hpp"

namespace posthorn::store::pg::detail {

class Listener {
  public:
    struct Channel {
        const char* name;
        std::function<void()> on_notify;  // from the listener's thread
    };

    Listener(Conn conn, std::vector<Channel> channels, std::function<bool(int)> own);
    ~Listener();  // stops the thread
    Listener(const Listener&) = delete;
    Listener& operator=(const Listener&) = delete;

    void start();  // LISTENs, then starts the thread
    void stop();

  private:
    void loop(bool listening);
    bool listen();  // LISTEN on every channel; false when the connection failed

    Conn conn_;
    std::vector<Channel> channels_;
    std::function<bool(int)> own_;
    int wake_fd_ = -1;  // an eventfd: stop() writes to it
    std::atomic<bool> stop_{false};
    std::thread thread_;
};

}  // namespace posthorn::store::pg::detail
