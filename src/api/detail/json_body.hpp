// Parsing a request's JSON body.
#pragma once

#include <boost/json/fwd.hpp>

#include <string_view>

#include "core/result.hpp"

namespace posthorn::api::detail {

// Parses `text` into `out` (whose storage the document is made with), with exactly the
// result of boost::json::parse and its default options: the same value, or the same error.
// A body of up to 64 KiB is scanned by simdjson, whose string scanning stays vectorized
// past an escape where Boost.JSON 1.81 goes a character at a time (a text body is full of
// \n); anything simdjson refuses or that differs from Boost.JSON's rules (nesting deeper
// than 16) is parsed again by Boost.JSON, so every error is Boost.JSON's.
void parse_json_body(std::string_view text, boost::json::value& out, error_code& ec);

}  // namespace posthorn::api::detail
