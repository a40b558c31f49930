// mail/address.hpp — one mailbox as users write it in an API field or a header:
// `a@b.example`, `Name <a@b.example>`, `"Last, First" <a@b.example>` (RFC 5322 §3.4),
// with quoted local parts (§3.4.1), UTF-8 in names and local parts (RFC 6532) and IDN
// domains, stored as punycode (mail/domain_name.hpp). Domain literals (`a@[192.0.2.1]`),
// group syntax and comments are refused: a transactional sender has no use for them, and
// each is a way to smuggle something past a check. CR, LF and other controls are refused
// everywhere. Pure; thread-safe.
#pragma once

#include <string>
#include <string_view>
#include <variant>

namespace posthorn::mail {

struct Mailbox {
    std::string name;    // display name, UTF-8, unquoted; may be empty
    std::string local;   // local part as it goes on the wire (quoted if it must be)
    std::string domain;  // canonical: lower-case A-labels

    std::string address() const {
        std::string out;
        out.reserve(local.size() + 1 + domain.size());
        append_address(out);
        return out;
    }
    // Appends `address` to `out` (a list of them is joined without a string each).
    void append_address(std::string& out) const { out.append(local).append(1, '@').append(domain); }
    // `address` alone, or `"name" <address>` with the name quoted as RFC 5322 needs.
    std::string display() const;
};

struct BadAddress {
    std::string reason;
};

std::variant<Mailbox, BadAddress> parse_mailbox(std::string_view text);

}  // namespace posthorn::mail
