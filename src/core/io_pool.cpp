#include "core/io_pool.hpp"

#include <boost/asio/executor_work_guard.hpp>

#include "core/log.hpp"
#include "core/thread_name.hpp"

namespace posthorn::core {

IoPool::IoPool(std::size_t contexts) {
    if (contexts == 0) contexts = 1;
    for (std::size_t i = 0; i < contexts; ++i)
        contexts_.push_back(std::make_unique<asio::io_context>(1));
}

IoPool::~IoPool() { stop(); }

void IoPool::start() {
    for (auto& ctx : contexts_) {
        guards_.emplace_back(asio::make_work_guard(*ctx));
        threads_.emplace_back([ctx = ctx.get()] {
            name_this_thread("ph-io");
            for (;;) {
                try {
                    ctx->run();
                    return;
                } catch (const std::exception& e) {
                    // A top-level task let an exception out: log it and keep serving the
                    // other sessions on this context (CONVENTIONS §6).
                    log::error("io thread: uncaught exception: {}", e.what());
                }
            }
        });
    }
}

void IoPool::stop() {
    guards_.clear();
    for (auto& ctx : contexts_) ctx->stop();
    for (auto& t : threads_)
        if (t.joinable()) t.join();
    threads_.clear();
}

asio::io_context& IoPool::next() {
    auto& ctx = *contexts_[next_];
    next_ = (next_ + 1) % contexts_.size();
    return ctx;
}

}  // namespace posthorn::core
