#include "mail/trace.hpp"

#include <algorithm>

namespace posthorn::mail {

namespace {

bool letter_or_digit(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

constexpr std::size_t kMaxHelo = 255;  // RFC 1035: a domain name's length

// The client's name as it gave it, made safe in a header: no comment, no ';' (which would
// end the field's tokens early), no white space, no 8-bit byte.
std::string safe_helo(std::string_view helo) {
    std::string out(helo.substr(0, kMaxHelo));
    static constexpr std::string_view kKept = "-._:[]";
    for (auto& c : out)
        if (!letter_or_digit(c) && kKept.find(c) == std::string_view::npos) c = '_';
    return out;
}

}  // namespace

std::string address_literal(std::string_view ip) {
    constexpr std::string_view kMapped = "::ffff:";
    if (ip.size() > kMapped.size() && ip.substr(0, kMapped.size()) == kMapped &&
        ip.find('.') != std::string_view::npos)
        ip.remove_prefix(kMapped.size());
    if (ip.find(':') != std::string_view::npos) return "[IPv6:" + std::string(ip) + "]";
    return "[" + std::string(ip) + "]";
}

std::string smtp_protocol(bool esmtp, bool tls, bool authenticated) {
    if (!esmtp) return "SMTP";
    std::string out = "ESMTP";
    if (tls) out += 'S';
    if (authenticated) out += 'A';
    return out;
}

std::string received_field(const ReceivedFrom& r) {
    // Without an address (a caller that has none): "from unknown (unknown)".
    const auto literal = r.client_ip.empty() ? std::string() : address_literal(r.client_ip);
    std::string out = "Received: from ";
    out.append(!r.helo.empty() ? safe_helo(r.helo) : literal.empty() ? "unknown" : literal);
    out.append(literal.empty() ? " (unknown" : " (unknown ").append(literal);
    out.append(")\r\n\tby ").append(r.by);
    out.append(" (posthorn) with ").append(r.with).append(" id ").append(r.id);
    if (!r.for_address.empty()) out.append("\r\n\tfor <").append(r.for_address).append(">");
    out.append(";\r\n\t").append(format_rfc5322(r.at)).append("\r\n");
    return out;
}

std::string feedback_id_field(std::initializer_list<std::string_view> identifiers) {
    static constexpr std::string_view kKept = ".-_=+";
    std::string out = "Feedback-ID: ";
    bool first = true;
    for (auto id : identifiers) {
        if (!first) out += ':';
        first = false;
        for (char c : id)
            if (letter_or_digit(c) || kKept.find(c) != std::string_view::npos) out += c;
    }
    out += "\r\n";
    return out;
}

}  // namespace posthorn::mail
