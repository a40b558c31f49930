// api/v1.hpp — the REST front door: authentication, the request log, body checks and the
// /v1 routes (one file per resource: logs.cpp, …). Mounted on http::Server as its handler.
//
// Order of checks for /v1: Bearer key (401, not logged) → JSON body (400 INVALID_JSON) →
// route (404, 405 with Allow) → handler. Every authenticated request is logged after its
// answer is made, off the response path. `GET /healthz` needs no key. Thread-safe.
#pragma once

#include <memory>

#include "core/clock.hpp"
#include "http/message.hpp"
#include "store/store.hpp"

namespace posthorn::api {

struct Deps {
    store::Store& store;
    const core::Clock& clock;
};

class V1 {
  public:
    explicit V1(Deps deps);
    ~V1();
    asio::awaitable<http::Response> handle(http::Request req);

  private:
    struct Impl;
    std::shared_ptr<Impl> impl_;
};

}  // namespace posthorn::api
