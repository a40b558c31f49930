// Parsing a request's JSON body.
#pragma once

#include <boost/json/fwd.hpp>

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include "core/result.hpp"

namespace posthorn::api::detail {

// Bounds on the work and memory a body may cost, whatever its size allows: a 30 MB
// `[1,1,…]` would become 15 million values (about 26 times the body in memory).
struct JsonLimits {
    std::size_t max_values = 100'000;  // values in the whole document
    std::size_t max_keys = 1'000;      // keys of one object
    int max_depth = 32;                // nested arrays and objects (Boost.JSON's own bound)
};

// Why `text` exceeds `limits` ("the body has more than 100000 JSON values"), found by one
// pass over its bytes without building anything (a count of the separators outside
// strings: an upper bound on the values); nullopt when it is within them. Says nothing of
// whether it is valid JSON.
std::optional<std::string> exceeds_json_limits(std::string_view text, const JsonLimits& limits);

// Parses `text` into `out` (whose storage the document is made with), with exactly the
// result of boost::json::parse and its default options: the same value, or the same error.
// A body of up to 64 KiB is scanned by simdjson, whose string scanning stays vectorized
// past an escape where Boost.JSON 1.81 goes a character at a time (a text body is full of
// \n); anything simdjson refuses or that differs from Boost.JSON's rules (nesting deeper
// than 16) is parsed again by Boost.JSON, so every error is Boost.JSON's.
void parse_json_body(std::string_view text, boost::json::value& out, error_code& ec);

}  // namespace posthorn::api::detail
