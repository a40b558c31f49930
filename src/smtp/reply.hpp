// smtp/reply.hpp — SMTP replies (RFC 5321 §4.2): a three-digit code and one or more lines,
// kept verbatim so that a user can see exactly what a remote server said. Pure.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.hpp"

namespace posthorn::smtp {

inline constexpr std::size_t kMaxReplyLine = 4096;  // RFC 5321 says 512; be lenient
inline constexpr std::size_t kMaxReplyLines = 100;

struct Reply {
    int code = 0;
    std::vector<std::string> lines;  // the text after "250-" / "250 ", one per line

    bool positive() const { return code >= 200 && code < 400; }
    bool transient() const { return code >= 400 && code < 500; }
    bool permanent() const { return code >= 500; }
    // "250-first\r\n250 last", as the server sent it (without the final CRLF).
    std::string verbatim() const;
};

// Feeds one line (without CRLF). Answers true when `reply` is complete.
// errc::malformed_reply for a line that is not a reply line, or a code that changes.
Result<bool> add_reply_line(Reply& reply, std::string_view line);

// A whole reply from text ("250-a\r\n250 b\r\n"); for tests and the fuzzer.
Result<Reply> parse_reply(std::string_view wire);

}  // namespace posthorn::smtp
