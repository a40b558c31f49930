#include "mail/report.hpp"

#include "core/text.hpp"
#include "mail/parse.hpp"

namespace posthorn::mail {
namespace {

std::string_view trim(std::string_view s) {
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
    while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r'))
        s.remove_suffix(1);
    return s;
}

// "rfc822; user@example.net" → "user@example.net"; "<a@b>" → "a@b".
std::string address_of(std::string_view value) {
    if (auto semi = value.find(';'); semi != std::string_view::npos) value.remove_prefix(semi + 1);
    value = trim(value);
    if (!value.empty() && value.front() == '<') value.remove_prefix(1);
    if (!value.empty() && value.back() == '>') value.remove_suffix(1);
    return core::ascii_lower(trim(value));
}

// RFC 3464 §2.3.4: class "." subject "." detail, digits (the class 2, 4 or 5), then maybe a
// comment; the code alone, or empty when the field holds something else.
std::string status_code(std::string_view v) {
    const auto code = v.substr(0, v.find_first_of(" \t("));
    int parts = 0;
    std::size_t digits = 0;
    for (char c : code) {
        if (c == '.') {
            if (digits == 0) return {};
            ++parts;
            digits = 0;
        } else if (c >= '0' && c <= '9' && ++digits <= 3) {
            continue;
        } else {
            return {};
        }
    }
    if (parts != 2 || digits == 0 || (code[0] != '2' && code[0] != '4' && code[0] != '5') ||
        code[1] != '.')
        return {};
    return std::string(code);
}

// Blocks of "Name: value" fields separated by blank lines (RFC 3464 §2.1, RFC 5965 §3.1).
// A control character within a line (a lone CR, say: anyone can send a report) becomes a
// space, so that no value carries one.
std::vector<std::vector<std::pair<std::string, std::string>>> field_blocks(std::string_view text) {
    std::vector<std::vector<std::pair<std::string, std::string>>> blocks(1);
    std::size_t pos = 0;
    std::string cleaned;
    while (pos <= text.size()) {
        auto eol = text.find('\n', pos);
        auto raw_line = text.substr(pos, (eol == std::string_view::npos ? text.size() : eol) - pos);
        if (!raw_line.empty() && raw_line.back() == '\r') raw_line.remove_suffix(1);
        cleaned.assign(raw_line);
        for (auto& c : cleaned)
            if ((static_cast<unsigned char>(c) < 0x20 && c != '\t') || c == '\x7f') c = ' ';
        const std::string_view line = cleaned;
        if (trim(line).empty()) {
            if (!blocks.back().empty()) blocks.emplace_back();
        } else if ((line.front() == ' ' || line.front() == '\t') && !blocks.back().empty()) {
            blocks.back().back().second += " " + std::string(trim(line));
        } else if (auto colon = line.find(':'); colon != std::string_view::npos) {
            blocks.back().emplace_back(core::ascii_lower(trim(line.substr(0, colon))),
                                       std::string(trim(line.substr(colon + 1))));
        }
        if (eol == std::string_view::npos) break;
        pos = eol + 1;
    }
    return blocks;
}

}  // namespace

Report parse_report(std::string_view raw) {
    Report r;
    const auto m = parse_message(raw);
    for (const auto& part : m.attachments) {
        if (part.content_type == "message/delivery-status") {
            r.kind = Report::Kind::dsn;
            auto blocks = field_blocks(part.content);
            for (std::size_t i = 1; i < blocks.size(); ++i) {  // block 0: per-message fields
                ReportRecipient rr;
                for (const auto& [k, v] : blocks[i]) {
                    if (k == "final-recipient")
                        rr.address = address_of(v);
                    else if (k == "original-recipient" && rr.address.empty())
                        rr.address = address_of(v);
                    else if (k == "action")
                        rr.action = core::ascii_lower(trim(v));
                    else if (k == "status")
                        rr.status = status_code(trim(v));
                    else if (k == "diagnostic-code")
                        rr.diagnostic = v;
                }
                if (!rr.address.empty()) r.recipients.push_back(std::move(rr));
            }
            return r;
        }
        if (part.content_type == "message/feedback-report") {
            r.kind = Report::Kind::arf;
            for (const auto& block : field_blocks(part.content))
                for (const auto& [k, v] : block) {
                    if (k == "feedback-type") r.feedback_type = core::ascii_lower(trim(v));
                    if (k == "original-rcpt-to")
                        r.recipients.push_back({address_of(v), "", "", ""});
                }
            return r;
        }
    }
    return r;
}

}  // namespace posthorn::mail
