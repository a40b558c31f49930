// libFuzzer target for the bounds on a JSON body (api::detail::exceeds_json_limits, which
// runs before anything is built): whenever it lets a document through and Boost.JSON
// parses it, the document really is within the bounds — no more values than max_values,
// no object with more than max_keys keys, no deeper than max_depth. Small bounds, picked by
// the first byte, so that the fuzzer reaches them.
#include <boost/json/parse.hpp>
#include <boost/json/parse_options.hpp>
#include <boost/json/value.hpp>

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "api/detail/json_body.hpp"

namespace {

namespace json = boost::json;
using posthorn::api::detail::JsonLimits;

struct Shape {
    std::size_t values = 0, keys = 0;
    int depth = 0;
};

void measure(const json::value& v, int depth, Shape& s) {
    ++s.values;
    if (depth > s.depth) s.depth = depth;
    if (const auto* o = v.if_object()) {
        if (o->size() > s.keys) s.keys = o->size();
        for (const auto& kv : *o) measure(kv.value(), depth + 1, s);
    } else if (const auto* a = v.if_array()) {
        for (const auto& e : *a) measure(e, depth + 1, s);
    }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    if (size < 1) return 0;
    const JsonLimits limits{.max_values = 1 + std::size_t{data[0]} % 16,
                            .max_keys = 1 + std::size_t{data[0]} / 16 % 4,
                            .max_depth = 1 + data[0] / 64};
    const std::string_view text(reinterpret_cast<const char*>(data + 1), size - 1);
    if (posthorn::api::detail::exceeds_json_limits(text, limits)) return 0;
    json::parse_options opts;
    opts.max_depth = 64;
    posthorn::error_code ec;
    const auto v = json::parse(text, ec, {}, opts);
    if (ec) return 0;
    Shape s;
    measure(v, 0, s);
    // A value at depth d sits inside d open brackets (the root at 0).
    if (s.values > limits.max_values || s.keys > limits.max_keys || s.depth > limits.max_depth)
        __builtin_trap();
    return 0;
}
