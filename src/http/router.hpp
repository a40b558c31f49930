// http/router.hpp — maps (method, path) to a route number. Patterns are literal segments
// and `{name}` placeholders ("/domains/{identifier}/verify"). A path that matches a pattern
// under another method is reported as such, so that the caller can answer 405 rather than
// 404 (DESIGN §4). Built once at start, then read-only: thread-safe for match().
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace posthorn::http {

class Router {
  public:
    struct Match {
        std::optional<std::size_t> route;  // set when method and path match
        bool path_known = false;           // the path matches some route, maybe not this method
        std::vector<std::pair<std::string, std::string>> params;
        std::string allowed;  // "GET, PATCH" when path_known and no route
    };

    // Returns the route number, in order of addition from 0.
    std::size_t add(std::string method, std::string_view pattern);
    Match match(std::string_view method, std::string_view path) const;

  private:
    struct Route {
        std::string method;
        std::vector<std::string> segments;  // "{x}" marks a placeholder
    };
    std::vector<Route> routes_;
};

}  // namespace posthorn::http
