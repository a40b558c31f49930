#include "app/mta_sts_fetcher.hpp"

namespace posthorn::app {

asio::awaitable<delivery::FetchResult> MtaStsFetcher::fetch(
    std::string host, std::uint16_t port, std::vector<asio::ip::address> addresses) {
    const std::string hostport = host + ":" + std::to_string(port);
    webhooks::HttpRequest req{.url = "https://" + hostport + "/.well-known/mta-sts.txt"};
    std::string pins;
    for (const auto& a : addresses)
        pins += (pins.empty() ? "" : ",") + (a.is_v6() ? "[" + a.to_string() + "]" : a.to_string());
    if (!pins.empty()) req.resolve.push_back(hostport + ":" + pins);
    auto r = co_await client_.get(std::move(req));
    co_return delivery::FetchResult{.status = r.status,
                                    .content_type = std::move(r.content_type),
                                    .body = std::move(r.body),
                                    .error = std::move(r.error)};
}

}  // namespace posthorn::app
