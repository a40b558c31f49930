// libFuzzer target for what the SMTP server reads from a client before it trusts anything
// (src/smtp/detail/command.cpp): the MAIL FROM / RCPT TO argument, the bare CR/LF check of a
// message and the removal of dot-stuffing. Each is held to what it promises, and the last
// two to a plain, slow reference written here.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "smtp/detail/command.hpp"

namespace {

using namespace posthorn::smtp::detail;

bool reference_bare(std::string_view s) {
    for (std::size_t i = 0; i < s.size(); ++i) {
        if (s[i] == '\n' && (i == 0 || s[i - 1] != '\r')) return true;
        if (s[i] == '\r' && (i + 1 == s.size() || s[i + 1] != '\n')) return true;
    }
    return false;
}

// Line by line (a line ends after its LF): a dot at the start of a line goes.
std::string reference_unstuff(std::string_view s) {
    std::string out;
    bool line_start = true;
    for (char c : s) {
        if (line_start && c == '.') {
            line_start = false;
            continue;
        }
        out += c;
        line_start = c == '\n';
    }
    return out;
}

void check_path(std::string_view line, std::string_view keyword) {
    auto p = parse_path(line, keyword);
    if (!p) return;
    if (p->path.size() > 254) __builtin_trap();
    for (unsigned char c : p->path)
        if (c <= 0x20 || c == 0x7f || c == '<' || c == '>') __builtin_trap();
    for (const auto& param : p->params) {
        if (param.empty()) __builtin_trap();
        for (unsigned char c : param)
            if (c == ' ' || (c >= 'a' && c <= 'z')) __builtin_trap();
    }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view in(reinterpret_cast<const char*>(data), size);
    // As the session hands them over: the argument after "MAIL " or "RCPT ".
    check_path(in, "FROM:");
    check_path(in, "TO:");
    if (has_bare_cr_or_lf(in) != reference_bare(in)) __builtin_trap();
    std::string message(in);
    unstuff(message);
    if (message != reference_unstuff(in)) __builtin_trap();
    return 0;
}
