// app/mta_sts_fetcher.hpp — delivery's PolicyFetcher (delivery/sts_policies.hpp) on the
// webhooks' libcurl client (webhooks/http_client.hpp): a GET of
// https://<host>:<port>/.well-known/mta-sts.txt (RFC 8461 §3.3), connecting to the addresses
// our resolver gave, with the certificate verified for <host>, no redirects. Lives in app
// because delivery and webhooks are on one layer and may not see each other.
// Thread-safety: that of the client.
#pragma once

#include "delivery/sts_policies.hpp"
#include "webhooks/http_client.hpp"

namespace posthorn::app {

class MtaStsFetcher final : public delivery::PolicyFetcher {
  public:
    explicit MtaStsFetcher(webhooks::HttpClient& client) : client_(client) {}
    asio::awaitable<delivery::FetchResult> fetch(std::string host, std::uint16_t port,
                                                 std::vector<asio::ip::address> addresses) override;

  private:
    webhooks::HttpClient& client_;
};

}  // namespace posthorn::app
