// What a /v1 route handler receives, and the JSON answer helpers shared by the handlers.
#pragma once

#include <boost/json/value.hpp>

#include <string>
#include <utility>
#include <vector>

#include "api/query.hpp"
#include "api/v1.hpp"
#include "http/message.hpp"

namespace posthorn::api::detail {

struct Context {
    http::Request req;
    std::string account_id;
    store::ApiKey key;         // the key the request presented (account_id is its account)
    bool via_session = false;  // the key came by a dashboard session's cookie (Principal)
    std::vector<std::pair<std::string, std::string>> params;  // path placeholders
    boost::json::value body;                                  // null when there was none
    const Deps& deps;  // owned by V1, which outlives every request
};

http::Response json(unsigned status, const boost::json::value& v);
// 500 INTERNAL_ERROR "could not <what>", logged; 503 STORE_UNAVAILABLE when the store
// could not be reached (Retry-After: 5) or stayed busy (Retry-After: 1): nothing was written.
http::Response internal_error(std::string_view what, const error_code& ec);
http::Response store_unavailable();
// The value of path placeholder `name` ("" when absent).
std::string param(const Context& ctx, std::string_view name);
http::Response validation_error(std::string_view message);
http::Response not_found(std::string_view message = "not found");
// 403 FORBIDDEN: the key's permission or domain does not allow this (`message` says what
// it lacks).
http::Response forbidden(std::string_view message);
// The pagination object of DESIGN §5.
boost::json::object pagination(const Paging& p, std::int64_t total);

}  // namespace posthorn::api::detail
