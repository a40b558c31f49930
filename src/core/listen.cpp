#include "core/listen.hpp"

namespace posthorn::core {

Result<asio::ip::tcp::endpoint> open_listener(asio::ip::tcp::acceptor& a,
                                              const asio::ip::tcp::endpoint& at) {
    using tcp = asio::ip::tcp;
    error_code ec;
    a.open(at.protocol(), ec);
    if (!ec) a.set_option(tcp::acceptor::reuse_address(true), ec);
    if (!ec) a.bind(at, ec);
    if (!ec) a.listen(asio::socket_base::max_listen_connections, ec);
    if (ec) return ec;
    auto bound = a.local_endpoint(ec);
    if (ec) return ec;
    return bound;
}

}  // namespace posthorn::core
