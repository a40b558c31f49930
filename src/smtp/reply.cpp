#include "smtp/reply.hpp"

#include <cctype>
#include <string>

#include "smtp/errors.hpp"

namespace posthorn::smtp {

namespace {
class Category final : public boost::system::error_category {
  public:
    const char* name() const noexcept override { return "posthorn.smtp"; }
    std::string message(int ev) const override {
        switch (static_cast<errc>(ev)) {
            case errc::line_too_long:
                return "reply line too long";
            case errc::malformed_reply:
                return "malformed reply";
            case errc::unexpected_eof:
                return "connection closed by the server";
            case errc::tls_unavailable:
                return "TLS required but not offered";
            case errc::tls_failed:
                return "TLS handshake failed";
            case errc::tls_not_verified:
                return "the server's TLS certificate did not verify";
            case errc::not_ready:
                return "session not ready";
            case errc::smtputf8_unsupported:
                return "the server does not accept UTF-8 addresses (no SMTPUTF8)";
        }
        return "unknown SMTP error";
    }
};
}  // namespace

const boost::system::error_category& error_category() noexcept {
    static const Category category;
    return category;
}

std::string Reply::verbatim() const {
    std::string out;
    const auto code_text = std::to_string(code);
    for (std::size_t i = 0; i < lines.size(); ++i) {
        if (i) out += "\r\n";
        out += code_text + (i + 1 == lines.size() ? " " : "-") + lines[i];
    }
    if (lines.empty()) out = code_text;
    return out;
}

Result<bool> add_reply_line(Reply& reply, std::string_view line) {
    if (line.size() > kMaxReplyLine || reply.lines.size() >= kMaxReplyLines)
        return {boost::system::in_place_error, make_error_code(errc::line_too_long)};
    if (line.size() < 3 || !std::isdigit(static_cast<unsigned char>(line[0])) ||
        !std::isdigit(static_cast<unsigned char>(line[1])) ||
        !std::isdigit(static_cast<unsigned char>(line[2])) || line[0] < '2' || line[0] > '5')
        return {boost::system::in_place_error, make_error_code(errc::malformed_reply)};
    const int code = (line[0] - '0') * 100 + (line[1] - '0') * 10 + (line[2] - '0');
    if (!reply.lines.empty() && code != reply.code)
        return {boost::system::in_place_error, make_error_code(errc::malformed_reply)};
    reply.code = code;
    if (line.size() == 3) {
        reply.lines.emplace_back();
        return true;
    }
    if (line[3] != ' ' && line[3] != '-')
        return {boost::system::in_place_error, make_error_code(errc::malformed_reply)};
    reply.lines.emplace_back(line.substr(4));
    return line[3] == ' ';
}

Result<Reply> parse_reply(std::string_view wire) {
    Reply r;
    while (!wire.empty()) {
        auto eol = wire.find('\n');
        auto line = wire.substr(0, eol);
        if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
        auto done = add_reply_line(r, line);
        if (!done) return done.error();
        if (*done) return r;
        if (eol == std::string_view::npos) break;
        wire.remove_prefix(eol + 1);
    }
    return errc::unexpected_eof;
}

}  // namespace posthorn::smtp
