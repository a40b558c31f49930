// core/asio.hpp — the Asio vocabulary every async module uses: the `asio` alias, awaitable,
// and `use_nothrow_awaitable`, with which expected failures come back as values
// (`auto [ec, n] = co_await ...`) rather than exceptions (CONVENTIONS §5).
// Asio is compiled once, in core/asio_impl.cpp (BOOST_ASIO_SEPARATE_COMPILATION).
#pragma once

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/thread_pool.hpp>
#include <boost/asio/use_awaitable.hpp>

namespace posthorn {
namespace asio = boost::asio;
inline constexpr auto use_nothrow_awaitable = asio::as_tuple(asio::use_awaitable);
}  // namespace posthorn
