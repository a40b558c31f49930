// core/io_pool.hpp — one io_context per core, each run by one thread (DESIGN §9).
// Network sessions live on one context for their whole life, so a session needs no locks.
// start() and stop() are called from the owning (main) thread only.
#pragma once

#include <cstddef>
#include <memory>
#include <thread>
#include <vector>

#include "core/asio.hpp"

namespace posthorn::core {

class IoPool {
  public:
    explicit IoPool(std::size_t contexts);
    ~IoPool();
    IoPool(const IoPool&) = delete;
    IoPool& operator=(const IoPool&) = delete;

    void start();
    // Stops every context and joins the threads; pending handlers are dropped.
    void stop();

    std::size_t size() const noexcept { return contexts_.size(); }
    asio::io_context& context(std::size_t i) { return *contexts_[i]; }
    // Round-robin choice, for spreading new connections.
    asio::io_context& next();

  private:
    using Guard = asio::executor_work_guard<asio::io_context::executor_type>;
    std::vector<std::unique_ptr<asio::io_context>> contexts_;
    std::vector<Guard> guards_;
    std::vector<std::thread> threads_;
    std::size_t next_ = 0;
};

}  // namespace posthorn::core
