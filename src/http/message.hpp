// http/message.hpp — the request and response as the product code sees them: plain
// structs, so that handlers never include Beast. Header names are lower-cased; the path and
// the query are percent-decoded.
#pragma once

#include <any>
#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/asio.hpp"

namespace posthorn::http {

using Fields = std::vector<std::pair<std::string, std::string>>;

struct Request {
    std::string method;  // "GET", as sent
    std::string target;  // raw request target, "/v1/logs?limit=1"
    std::string path;    // decoded path, "/v1/logs"
    Fields query;        // decoded query parameters, in order
    Fields headers;      // lower-case names
    std::string body;
    std::string remote_ip;
    // Set by the server's admission check (Server::Options::admit) for the handler, which
    // alone knows its type (on /v1, the API key the request presented). Never read from
    // the wire; empty until then.
    std::any principal;

    // Sets target, path and query from an origin-form request target ("/v1/logs?limit=1");
    // false when it is not one (the request is then left as it was).
    bool set_target(std::string raw_target);

    std::optional<std::string_view> header(std::string_view lower_name) const;
    // The first value of a query parameter.
    std::optional<std::string_view> param(std::string_view name) const;
};

struct Response {
    unsigned status = 200;
    std::string body;
    std::string content_type = "application/json";
    Fields headers;
};

using Handler = std::function<asio::awaitable<Response>(Request)>;

// What a server decides from a request's head, before it reads a byte of the body: whether
// to answer at once (the body is then never read, so a client without a key cannot make
// the server wait for one), and how large the body may be.
struct Admission {
    std::optional<Response> refusal;
    std::size_t body_limit = 0;
};
// Given the request with its method, target, path, query and headers set and no body.
using Admit = std::function<asio::awaitable<Admission>(Request&)>;

// The JSON error body of DESIGN §4: {"code", "message", "status"}.
Response error_response(unsigned status, std::string_view code, std::string_view message);

}  // namespace posthorn::http
