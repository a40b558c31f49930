// libFuzzer target for the Authorization header of every API call (api::bearer_token in
// src/api/keys.cpp, read before any key is looked up): a token it finds is a non-empty part
// of the value, without spaces or tabs at either end, after "Bearer " in some case; the
// same token comes back from "Bearer <token>"; and the input, used as a token, comes back
// from "Bearer <input>" when it has no white space at its ends. What looks_like_api_key
// accepts is "ph_" and 32 characters.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "api/keys.hpp"
#include "core/text.hpp"

namespace {
bool blank(char c) { return c == ' ' || c == '\t'; }
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    using namespace posthorn;
    const std::string_view v(reinterpret_cast<const char*>(data), size);
    if (const auto t = api::bearer_token(v)) {
        if (t->empty() || blank(t->front()) || blank(t->back())) __builtin_trap();
        if (t->data() < v.data() || t->data() + t->size() > v.data() + v.size()) __builtin_trap();
        const auto before = v.substr(0, static_cast<std::size_t>(t->data() - v.data()));
        const auto scheme = before.find_first_not_of(" \t");
        if (scheme == std::string_view::npos ||
            !core::ascii_iequals(before.substr(scheme, 7), "Bearer "))
            __builtin_trap();
        if (api::bearer_token("Bearer " + std::string(*t)) != *t) __builtin_trap();
        if (api::looks_like_api_key(*t) && (t->size() != 35 || t->substr(0, 3) != "ph_"))
            __builtin_trap();
    }
    if (!v.empty() && !blank(v.front()) && !blank(v.back()) &&
        api::bearer_token("bEaReR " + std::string(v)) != v)
        __builtin_trap();
    return 0;
}
