// core/time.hpp — wall-clock time as milliseconds since the Unix epoch (UTC), and its
// ISO 8601 text form `2026-11-21T10:00:00.123Z` (DESIGN §2). The store keeps integers;
// only the API edge formats and parses text.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace posthorn {

using UnixMs = std::int64_t;

// Always UTC, always milliseconds: "2026-11-21T10:00:00.123Z".
std::string format_iso8601(UnixMs ms);

// RFC 5322 §3.3, in UTC, to the second: "Sat, 21 Nov 2026 10:00:00 +0000" (the Date header).
std::string format_rfc5322(UnixMs ms);

// Accepts "2026-11-21", "2026-11-21T10:00:00", with optional fraction (1–9 digits) and a
// zone of "Z" or "±hh:mm". A date alone means midnight UTC. Anything else: nullopt.
std::optional<UnixMs> parse_iso8601(std::string_view text);

}  // namespace posthorn
