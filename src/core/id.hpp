// core/id.hpp — resource identifiers (DESIGN §2): a type prefix and 26 characters of
// Crockford base32 holding 48 bits of milliseconds and 80 random bits, so that ids sort
// by creation time and never collide in practice ("em_01jd3k…"). Thread-safe.
#pragma once

#include <string>
#include <string_view>

#include "core/time.hpp"

namespace posthorn {

std::string new_id(std::string_view prefix, UnixMs now);

// The smallest id of millisecond `t`: ids made at `t` or later sort at or above it, ids made
// before it below. (new_id never goes back in time: an id's time is at least the `now` it
// was given.)
std::string first_id_at(std::string_view prefix, UnixMs t);

// True when `id` is `prefix` followed by 26 Crockford base32 characters.
bool is_id(std::string_view id, std::string_view prefix) noexcept;

// Random bytes from the kernel (getrandom). Aborts if the kernel cannot provide them.
void random_bytes(void* out, std::size_t n);

}  // namespace posthorn
