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

// Blocks of "Name: value" fields separated by blank lines (RFC 3464 §2.1, RFC 5965 §3.1).
std::vector<std::vector<std::pair<std::string, std::string>>> field_blocks(std::string_view text) {
    std::vector<std::vector<std::pair<std::string, std::string>>> blocks(1);
    std::size_t pos = 0;
    while (pos <= text.size()) {
        auto eol = text.find('\n', pos);
        auto line = text.substr(pos, (eol == std::string_view::npos ? text.size() : eol) - pos);
        if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
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
                        rr.status = std::string(trim(v));
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
