// core/block_on.hpp — runs one coroutine to completion on a private io_context and answers
// its value: for the CLI's one-shot commands and for tests, never on a network thread.
// An exception the coroutine throws is thrown again here.
#pragma once

#include <exception>
#include <optional>
#include <utility>

#include "core/asio.hpp"

namespace posthorn {

template <class T>
T block_on(asio::awaitable<T> aw) {
    asio::io_context ctx;
    std::optional<T> out;
    std::exception_ptr failure;
    asio::co_spawn(ctx, std::move(aw), [&](const std::exception_ptr& e, T v) {
        failure = e;
        if (!e) out = std::move(v);
    });
    ctx.run();
    if (failure) std::rethrow_exception(failure);
    return std::move(*out);
}

}  // namespace posthorn
