#include "api/detail/json_body.hpp"

#include <simdjson.h>

#include <boost/json/parse.hpp>
#include <boost/json/value.hpp>

#include <cstring>
#include <vector>

namespace posthorn::api::detail {

namespace {

namespace json = boost::json;
using simdjson::dom::element;
using simdjson::dom::element_type;

// Larger bodies are mostly attachments' base64, which has no escapes: Boost.JSON's fast
// path is as good there, and the thread's parser does not keep a larger buffer. Up to this
// size a long text or HTML part (full of escaped newlines, which Boost.JSON 1.81 scans a
// character at a time) is scanned by simdjson: with 100 KB of text, Boost.JSON's scan was
// 8% of the server's CPU in bench/delivery.sh (perf, by object).
constexpr std::size_t kMaxFast = 1024 * 1024;
// Well under Boost.JSON's max_depth (32), so that nothing it refuses is accepted here.
constexpr int kMaxDepth = 16;

// Builds `out` from `e`; false when the document is nested too deeply for this path.
bool build(element e, json::value& out, int depth) {
    switch (e.type()) {
        case element_type::OBJECT: {
            if (depth == kMaxDepth) return false;
            const auto o = e.get_object().value_unsafe();
            auto& jo = out.emplace_object();
            jo.reserve(o.size());
            // A repeated key keeps its first place and its last value, as in Boost.JSON.
            for (const auto field : o)
                if (!build(field.value, jo[field.key], depth + 1)) return false;
            return true;
        }
        case element_type::ARRAY: {
            if (depth == kMaxDepth) return false;
            const auto a = e.get_array().value_unsafe();
            auto& ja = out.emplace_array();
            ja.reserve(a.size());
            for (const auto item : a) {
                ja.emplace_back(nullptr);
                if (!build(item, ja.back(), depth + 1)) return false;
            }
            return true;
        }
        case element_type::STRING:
            out.emplace_string() = e.get_string().value_unsafe();
            return true;
        case element_type::INT64:
            out = e.get_int64().value_unsafe();
            return true;
        case element_type::UINT64:
            out = e.get_uint64().value_unsafe();
            return true;
        case element_type::DOUBLE:
            out = e.get_double().value_unsafe();
            return true;
        case element_type::BOOL:
            out = e.get_bool().value_unsafe();
            return true;
        case element_type::NULL_VALUE:
            out = nullptr;
            return true;
    }
    return false;
}

}  // namespace

std::optional<std::string> exceeds_json_limits(std::string_view text, const JsonLimits& limits) {
    // keys[d]: the keys seen so far in the object open at depth d (arrays count none).
    std::vector<std::size_t> keys;
    std::size_t values = 1;
    const char* p = text.data();
    const char* const end = p + text.size();
    while (p < end) {
        const char c = *p++;
        switch (c) {
            case '"':
                // To the closing quote: one not preceded by an odd run of backslashes.
                for (;;) {
                    const auto* q = static_cast<const char*>(
                        std::memchr(p, '"', static_cast<std::size_t>(end - p)));
                    if (!q) return std::nullopt;  // unterminated: the parser says so
                    const char* b = q;
                    while (b > p && b[-1] == '\\') --b;
                    p = q + 1;
                    if ((q - b) % 2 == 0) break;
                }
                break;
            case '[':
            case '{':
                if (static_cast<int>(keys.size()) >= limits.max_depth)
                    return "the body nests arrays and objects more than " +
                           std::to_string(limits.max_depth) + " deep";
                keys.push_back(0);
                break;
            case ']':
            case '}':
                if (!keys.empty()) keys.pop_back();
                break;
            case ',':
                if (++values > limits.max_values)
                    return "the body has more than " + std::to_string(limits.max_values) +
                           " JSON values";
                break;
            case ':':
                if (!keys.empty() && ++keys.back() > limits.max_keys)
                    return "an object in the body has more than " +
                           std::to_string(limits.max_keys) + " keys";
                break;
            default:
                break;
        }
    }
    return std::nullopt;
}

void parse_json_body(std::string_view text, json::value& out, error_code& ec) {
    ec = {};
    if (text.size() <= kMaxFast) {
        // One per thread, reused: its buffers are sized by the largest body it has seen.
        thread_local simdjson::dom::parser parser(kMaxFast);
        element root;
        if (!parser.parse(text.data(), text.size()).get(root) && build(root, out, 0)) return;
    }
    out = json::parse(text, ec, out.storage());
}

}  // namespace posthorn::api::detail
