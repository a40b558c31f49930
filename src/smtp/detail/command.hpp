// The pieces of the SMTP server that read what a client sends (RFC 5321): the path and
// parameters of MAIL FROM / RCPT TO, the check for a bare CR or LF in a message, and the
// removal of dot-stuffing. Apart from the session so that tests/fuzz/smtp_command_fuzz.cpp
// can feed them anything. Pure; private to smtp/.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace posthorn::smtp::detail {

// ASCII upper case.
std::string upper(std::string_view s);

// "FROM:<a@b> SIZE=12" → the path and the parameters; nullopt on a syntax error. The path
// is at most 254 bytes without controls, spaces or angle brackets.
struct PathArg {
    std::string path;
    std::vector<std::string> params;  // upper-cased keyword=value
};
std::optional<PathArg> parse_path(std::string_view arg, std::string_view keyword);

// RFC 5321 §2.3.8: lines end in CRLF; a lone CR or LF in a message is refused, so that no
// other server can read a message end where we do not (SMTP smuggling).
bool has_bare_cr_or_lf(std::string_view s);

// RFC 5321 §4.5.2: drops the dot that the client put in front of every line that starts
// with one, in place.
void unstuff(std::string& s);

}  // namespace posthorn::smtp::detail
