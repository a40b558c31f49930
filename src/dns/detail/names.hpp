// The one form in which names are compared and handed out: ASCII lower-case (RFC 4343: DNS
// names compare case-insensitively, and only ASCII letters fold), without the trailing dot
// of an absolute name. The root "." becomes "".
#pragma once

#include <string>
#include <string_view>

namespace posthorn::dns::detail {

std::string canonical_name(std::string_view name);

// A name we refuse to send: empty, or with a NUL byte (c-ares takes a C string, so
// "a.example\0.evil" would silently become "a.example").
bool is_bad_query_name(std::string_view name) noexcept;

}  // namespace posthorn::dns::detail
