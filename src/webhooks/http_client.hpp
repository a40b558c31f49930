// webhooks/http_client.hpp — the HTTP client that calls webhook URLs, and fetches MTA-STS
// policies for delivery (app wires it behind delivery::PolicyFetcher): libcurl's multi
// interface on a thread of its own, so that neither a network thread nor a blocking-pool
// thread ever waits on a slow receiver (DESIGN §8).
//
// Every request is a POST (or a GET) with a bounded time (connect + answer), TLS
// certificates and host names verified, no redirects followed, no proxy (the environment's
// proxy variables are ignored), http and https only. Unless `allow_private` is set, a
// connection to a loopback, private, link-local or other special-purpose address
// (core/address.hpp) is refused before its socket is made, whatever name led to it: checked
// on each address curl is about to connect to (CURLOPT_OPENSOCKETFUNCTION, called for every
// address it tries, both families of happy eyeballs included), so DNS rebinding cannot get
// round it. The answer's body is read (at most 64 KiB): dropped for a POST, kept for a GET.
//
// Thread-safety: post() may be called from any thread. The awaiting coroutine resumes on
// its own executor. Destroying the client aborts the transfers in flight; their awaiting
// coroutines are never resumed (destroy it after the executors that wait on it stopped).
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/asio.hpp"

namespace posthorn::webhooks {

struct HttpRequest {
    std::string url;
    std::vector<std::pair<std::string, std::string>> headers;
    std::string body;
    // "host:port:address[,address]" entries (CURLOPT_RESOLVE): where to connect for a name
    // already resolved by our own resolver; the private-address check still applies.
    std::vector<std::string> resolve;
};

struct HttpResult {
    std::optional<int> status;  // none: no HTTP answer came
    std::string error;          // why there was no answer ("" when there was one)
    std::int64_t duration_ms = 0;
    std::string content_type;  // of the answer
    std::string body;          // of a GET's answer (a POST's is dropped)
};

class HttpClient {
  public:
    struct Options {
        std::chrono::milliseconds timeout{10'000};  // the whole exchange
        bool allow_private = false;
        std::string user_agent = "posthorn-webhooks/1";
        std::string ca_file;  // PEM CAs to trust; "": the system's
        // The setting that allows private addresses, named when one is refused.
        std::string private_setting = "webhooks.allow_private_targets";
    };

    explicit HttpClient(Options options);
    ~HttpClient();
    HttpClient(const HttpClient&) = delete;
    HttpClient& operator=(const HttpClient&) = delete;

    // Sends `request` as a POST; `done(result)` is called once, on the client's thread.
    void post(HttpRequest request, std::function<void(HttpResult)> done);
    // The same, resuming the caller on its own executor.
    asio::awaitable<HttpResult> post(HttpRequest request);
    // A GET of request.url (its body is not sent); `done(result)` as for post().
    void get_then(HttpRequest request, std::function<void(HttpResult)> done);
    // The same, resuming the caller on its own executor.
    asio::awaitable<HttpResult> get(HttpRequest request);

  private:
    void start(HttpRequest request, std::function<void(HttpResult)> done, bool get);
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

}  // namespace posthorn::webhooks
