// core/blocking.hpp — run blocking work (SQLite, big MIME parses) on a pool and resume on
// the caller's executor, so that no network thread ever blocks (CONVENTIONS §8).
#pragma once

#include <type_traits>

#include "core/asio.hpp"

namespace posthorn::core {

template <class F>
asio::awaitable<std::invoke_result_t<F&>> call_now(F fn) {
    co_return fn();
}

// `fn` runs on `pool`; the awaiting coroutine resumes on its own executor.
template <class F>
asio::awaitable<std::invoke_result_t<F&>> run_blocking(asio::any_io_executor pool, F fn) {
    // Named rather than a temporary inside co_await (docs/architecture.md, "Coroutines").
    auto task = call_now(std::move(fn));
    co_return co_await asio::co_spawn(pool, std::move(task), asio::use_awaitable);
}

}  // namespace posthorn::core
