#include "mail/address.hpp"

#include "core/text.hpp"
#include "mail/domain_name.hpp"

namespace posthorn::mail {
namespace {

constexpr std::size_t kMaxLocal = 64;     // RFC 5321 §4.5.3.1.1
constexpr std::size_t kMaxAddress = 254;  // RFC 5321 §4.5.3.1.3 path less the brackets

std::string_view trim(std::string_view s) {
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
    while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
    return s;
}

// RFC 5322 §3.2.3 atext, plus any UTF-8 byte (RFC 6532 §3.2).
constexpr core::ByteSet kAtext(
    "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ!#$%&'*+-/=?^_`{|}~");
bool is_atext(unsigned char c) { return c >= 0x80 || kAtext.has(static_cast<char>(c)); }

bool has_control(std::string_view s) {
    for (unsigned char c : s)
        if (c < 0x20 || c == 0x7f) return true;
    return false;
}

BadAddress bad(std::string_view text, const std::string& why) {
    return BadAddress{"'" + std::string(text) + "' is not a valid email address: " + why};
}

// A dot-atom local part, or a quoted string kept in its quoted wire form.
std::variant<std::string, std::string> parse_local(std::string_view local) {
    using R = std::variant<std::string, std::string>;
    if (local.empty()) return R(std::in_place_index<1>, "the part before @ is empty");
    if (local.front() == '"') {
        if (local.size() < 2 || local.back() != '"')
            return R(std::in_place_index<1>, "unterminated quoted local part");
        for (std::size_t i = 1; i + 1 < local.size(); ++i) {
            const char c = local[i];
            if (c == '\\') {
                if (i + 2 >= local.size()) return R(std::in_place_index<1>, "bad escape in quotes");
                ++i;
            } else if (c == '"') {
                return R(std::in_place_index<1>, "stray quote in the local part");
            }
        }
        return R(std::in_place_index<0>, std::string(local));
    }
    if (local.front() == '.' || local.back() == '.' || local.find("..") != std::string_view::npos)
        return R(std::in_place_index<1>, "dots must separate words in the local part");
    for (unsigned char c : local)
        if (c != '.' && !is_atext(c))
            return R(std::in_place_index<1>,
                     std::string("the local part may not contain '") + static_cast<char>(c) + "'");
    return R(std::in_place_index<0>, std::string(local));
}

// The display name: a quoted string (unquoted here) or a run of words.
std::variant<std::string, std::string> parse_name(std::string_view name) {
    using R = std::variant<std::string, std::string>;
    name = trim(name);
    if (name.empty()) return R(std::in_place_index<0>, "");
    if (name.front() == '"') {
        if (name.size() < 2 || name.back() != '"')
            return R(std::in_place_index<1>, "unterminated quoted name");
        std::string out;
        for (std::size_t i = 1; i + 1 < name.size(); ++i) {
            char c = name[i];
            if (c == '\\' && i + 2 < name.size())
                c = name[++i];
            else if (c == '"')
                return R(std::in_place_index<1>, "stray quote in the name");
            out.push_back(c);
        }
        return R(std::in_place_index<0>, out);
    }
    static constexpr core::ByteSet kSpecials("<>@,;:\"[]\\");
    for (char c : name)
        if (kSpecials.has(c))
            return R(std::in_place_index<1>,
                     std::string("the name may not contain '") + c + "' unless it is quoted");
    return R(std::in_place_index<0>, std::string(name));
}

}  // namespace

std::string Mailbox::display() const {
    if (name.empty()) return address();
    std::string quoted = "\"";
    for (char c : name) {
        if (c == '"' || c == '\\') quoted.push_back('\\');
        quoted.push_back(c);
    }
    return quoted + "\" <" + address() + ">";
}

std::variant<Mailbox, BadAddress> parse_mailbox(std::string_view text) {
    if (text.size() > 1024) return bad(text.substr(0, 64), "too long");
    if (has_control(text))
        return bad(text, "control characters (such as line breaks) are not allowed");
    std::string_view s = trim(text);
    if (s.empty()) return BadAddress{"an email address is empty"};

    Mailbox m;
    std::string_view spec = s;
    // name-addr: the last '<' outside quotes opens the address.
    bool in_quotes = false;
    std::size_t open = std::string_view::npos;
    for (std::size_t i = 0; i < s.size(); ++i) {
        if (s[i] == '\\' && in_quotes) {
            ++i;
        } else if (s[i] == '"') {
            in_quotes = !in_quotes;
        } else if (s[i] == '<' && !in_quotes) {
            open = i;
            break;
        }
    }
    if (open != std::string_view::npos) {
        if (s.back() != '>') return bad(text, "text after the closing '>'");
        auto name = parse_name(s.substr(0, open));
        if (name.index() == 1) return bad(text, std::get<1>(name));
        m.name = std::get<0>(name);
        spec = trim(s.substr(open + 1, s.size() - open - 2));
    }
    static constexpr core::ByteSet kNotInSpec("<> ,;");
    if (kNotInSpec.any_in(spec) && spec.front() != '"') return bad(text, "one address expected");

    const auto at = spec.rfind('@');
    if (at == std::string_view::npos) return bad(text, "no @");
    auto local = parse_local(spec.substr(0, at));
    if (local.index() == 1) return bad(text, std::get<1>(local));
    m.local = std::get<0>(local);
    if (m.local.size() > kMaxLocal) return bad(text, "the part before @ is longer than 64 octets");

    const auto domain_text = spec.substr(at + 1);
    if (!domain_text.empty() && domain_text.front() == '[')
        return bad(text, "address literals are not accepted");
    auto domain = normalize_domain(domain_text);
    if (auto* b = std::get_if<BadDomain>(&domain)) return bad(text, b->reason);
    m.domain = std::get<std::string>(domain);
    if (m.local.size() + 1 + m.domain.size() > kMaxAddress)
        return bad(text, "longer than 254 octets");
    return m;
}

}  // namespace posthorn::mail
