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

// The millisecond an id was made at (its first 48 bits), for an id of `prefix` (is_id).
UnixMs id_time(std::string_view id, std::string_view prefix) noexcept;

// Appends `bytes` in lower-case Crockford base32, 5 bits a character from the top, after
// `leading_zero_bits` zero bits (ids use 2, so that 128 bits make 26 characters); bits
// left over at the end (fewer than 5) are dropped.
void append_base32(std::string& out, const unsigned char* bytes, std::size_t n,
                   unsigned leading_zero_bits = 0);

// True when every character of `s` is one of append_base32's.
bool is_base32(std::string_view s) noexcept;

// True when `id` is `prefix` followed by 26 Crockford base32 characters.
bool is_id(std::string_view id, std::string_view prefix) noexcept;

// Random bytes from the kernel (getrandom; up to 64 at a time through a buffer of the
// calling thread's, filled 256 at a time). Aborts if the kernel cannot provide them.
void random_bytes(void* out, std::size_t n);

}  // namespace posthorn
