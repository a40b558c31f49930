#include "mail/dkim.hpp"

#include <array>
#include <vector>

#include "core/text.hpp"
#include "crypto/hash.hpp"
#include "crypto/keys.hpp"

namespace posthorn::mail {
namespace {

// DESIGN §7 / the issue: h= covers these when present. Feedback-ID too (issue 30): Gmail
// trusts it only under a DKIM signature made after it was added.
constexpr std::array<std::string_view, 10> kSigned = {
    "from",       "to",       "cc",           "subject",      "date",
    "message-id", "reply-to", "mime-version", "content-type", "feedback-id"};

bool is_wsp(char c) { return c == ' ' || c == '\t'; }

struct Header {
    std::string name;   // as written
    std::string value;  // after the colon, unfolded lines kept (with CRLF)
};

// Splits the header block from the body at the first empty line.
void split_message(std::string_view msg, std::vector<Header>& headers, std::string_view& body) {
    std::size_t pos = 0;
    while (pos < msg.size()) {
        const auto eol = msg.find("\r\n", pos);
        const auto line_end = eol == std::string_view::npos ? msg.size() : eol;
        if (line_end == pos) {  // empty line: the body follows
            body = msg.substr(std::min(msg.size(), pos + 2));
            return;
        }
        const auto line = msg.substr(pos, line_end - pos);
        if (is_wsp(line.front()) && !headers.empty()) {
            headers.back().value += "\r\n";
            headers.back().value += line;
        } else {
            const auto colon = line.find(':');
            if (colon != std::string_view::npos)
                headers.push_back(
                    {std::string(line.substr(0, colon)), std::string(line.substr(colon + 1))});
        }
        pos = line_end + 2;
    }
    body = {};
}

}  // namespace

// RFC 6376 §3.4.2: lower-case name, unfold, collapse WSP runs to one space, trim around.
std::string dkim_relaxed_header(std::string_view name, std::string_view value) {
    std::string out = core::ascii_lower(name);
    // trim trailing WSP of the name
    while (!out.empty() && is_wsp(out.back())) out.pop_back();
    out += ':';
    std::string v;
    bool space = false;
    for (char c : value) {
        if (c == '\r' || c == '\n') continue;  // unfold
        if (is_wsp(c)) {
            space = true;
            continue;
        }
        if (space && !v.empty()) v += ' ';
        space = false;
        v += c;
    }
    return out + v;
}

// RFC 6376 §3.4.4: WSP runs to one space, no WSP at line ends, no empty lines at the end,
// and a non-empty body ends in CRLF.
std::string dkim_relaxed_body(std::string_view body) {
    std::string out;
    out.reserve(body.size() + 2);
    std::size_t pos = 0;
    std::size_t pending_empty = 0;  // empty lines, held until a non-empty line comes
    while (pos < body.size()) {
        auto eol = body.find("\r\n", pos);
        const bool last = eol == std::string_view::npos;
        const auto line = body.substr(pos, (last ? body.size() : eol) - pos);
        const std::size_t mark = out.size();
        for (; pending_empty > 0; --pending_empty) out += "\r\n";
        const std::size_t start = out.size();
        // Most lines have no tab, no run of spaces and no trailing space: copied whole.
        if (line.find('\t') == std::string_view::npos &&
            line.find("  ") == std::string_view::npos && (line.empty() || line.back() != ' ')) {
            out.append(line);
        } else {
            bool space = false;
            for (char c : line) {
                if (is_wsp(c)) {
                    space = true;
                    continue;
                }
                if (space) out += ' ';
                space = false;
                out += c;
            }
        }
        if (out.size() == start) {  // empty once canonical: held back, with those before
            out.resize(mark);
            pending_empty += (start - mark) / 2 + 1;
        } else {
            out += "\r\n";
        }
        if (last) break;
        pos = eol + 2;
    }
    return out;
}

Result<std::string> dkim_sign(std::string_view message, const DkimKey& key, UnixMs now) {
    std::vector<Header> headers;
    std::string_view body;
    split_message(message, headers, body);

    const auto body_hash = crypto::sha256(dkim_relaxed_body(body));
    const std::string bh = crypto::base64_encode(
        std::string_view(reinterpret_cast<const char*>(body_hash.data()), body_hash.size()));

    // h=: each signed header present, bottom-up instances as RFC 6376 §5.4.2 orders them;
    // From and Feedback-ID are listed once more than they occur, so that one added later
    // breaks the signature (over-signing, §8.15).
    std::string h;
    std::string canonical;
    for (auto name : kSigned) {
        int count = 0;
        for (auto it = headers.rbegin(); it != headers.rend(); ++it) {
            if (!core::ascii_iequals(it->name, name)) continue;
            canonical += dkim_relaxed_header(it->name, it->value) + "\r\n";
            h += (h.empty() ? "" : ":") + std::string(name);
            ++count;
        }
        if ((name == "from" || name == "feedback-id") && count > 0) h += ":" + std::string(name);
    }
    const std::string sig_value = " v=1; a=rsa-sha256; c=relaxed/relaxed; d=" + key.domain +
                                  "; s=" + key.selector + "; t=" + std::to_string(now / 1000) +
                                  ";\r\n\th=" + h + ";\r\n\tbh=" + bh + ";\r\n\tb=";
    canonical += dkim_relaxed_header("DKIM-Signature", sig_value);  // no trailing CRLF (§3.7)
    auto sig = key.key.sign_sha256(canonical);
    if (!sig) return sig.error();
    // b= folded at 72 characters so that no header line is long.
    const std::string b64 = crypto::base64_encode(*sig);
    std::string folded;
    for (std::size_t i = 0; i < b64.size(); i += 72)
        folded += (i ? "\r\n\t " : "") + b64.substr(i, 72);
    std::string out = "DKIM-Signature:" + sig_value + folded + "\r\n";
    out.append(message);
    return out;
}

}  // namespace posthorn::mail
