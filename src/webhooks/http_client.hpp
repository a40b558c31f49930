// webhooks/http_client.hpp — the HTTP client that calls webhook URLs: libcurl's multi
// interface on a thread of its own, so that neither a network thread nor a blocking-pool
// thread ever waits on a slow receiver (DESIGN §8).
//
// Every request is a POST with a bounded time (connect + answer), TLS certificates and
// host names verified, no redirects followed, no proxy (the environment's proxy variables
// are ignored), http and https only. Unless `allow_private` is set, a connection to a
// loopback, private, link-local or other special-purpose address (core/address.hpp) is
// refused before its socket is made, whatever name led to it: checked on each address curl
// is about to connect to (CURLOPT_OPENSOCKETFUNCTION, called for every address it tries,
// both families of happy eyeballs included), so DNS rebinding cannot get round it. The
// answer's body is read and dropped (at most 64 KiB).
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
};

struct HttpResult {
    std::optional<int> status;  // none: no HTTP answer came
    std::string error;          // why there was no answer ("" when there was one)
    std::int64_t duration_ms = 0;
};

class HttpClient {
  public:
    struct Options {
        std::chrono::milliseconds timeout{10'000};  // the whole exchange
        bool allow_private = false;
        std::string user_agent = "posthorn-webhooks/1";
    };

    explicit HttpClient(Options options);
    ~HttpClient();
    HttpClient(const HttpClient&) = delete;
    HttpClient& operator=(const HttpClient&) = delete;

    // Sends `request` as a POST; `done(result)` is called once, on the client's thread.
    void post(HttpRequest request, std::function<void(HttpResult)> done);
    // The same, resuming the caller on its own executor.
    asio::awaitable<HttpResult> post(HttpRequest request);

  private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

}  // namespace posthorn::webhooks
