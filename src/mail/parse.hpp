// mail/parse.hpp — reading a message someone else wrote (inbound mail, SMTP submission)
// with GMime 3: the addresses of From/To/Cc/Reply-To, the decoded subject, the first
// text/plain and text/html bodies (converted to UTF-8), every attachment decoded, and the
// headers unfolded. Never fails: GMime makes the best of broken input, and what cannot be
// read is left empty. Also small, byte-preserving edits of a header block. Thread-safe
// after mail::init().
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace posthorn::mail {

struct ParsedAddress {
    std::string name;
    std::string address;  // as written: local@domain (domain not canonicalised)
};

struct ParsedAttachment {
    std::string filename;
    std::string content_type;
    std::string content_id;
    std::string content;  // decoded bytes
};

struct ParsedMessage {
    std::vector<ParsedAddress> from, to, cc, reply_to;
    std::string subject;
    std::string message_id;  // without <>
    std::optional<std::string> text, html;
    std::vector<std::pair<std::string, std::string>> headers;  // in order, values unfolded
    std::vector<ParsedAttachment> attachments;
};

ParsedMessage parse_message(std::string_view raw);

// The header block of `raw`: every line up to and including the empty line that ends it
// (all of `raw` when there is none).
std::string_view header_block(std::string_view raw);

// The header block edited in place, the rest byte for byte: drops every field named in
// `remove` (case-insensitive, continuation lines too) and puts `add` fields in front.
std::string edit_headers(std::string_view raw, const std::vector<std::string>& remove,
                         const std::vector<std::pair<std::string, std::string>>& add);

// `raw` with `first` (whole fields, folded, CRLF) in front of its header block and `last`
// at its end, before the empty line (at the end of `raw` when it has none); the rest byte
// for byte.
std::string add_fields(std::string_view raw, std::string_view first, std::string_view last);

// Every inline text/html part (not an attachment) replaced by `edit(its text as UTF-8)`
// (decoded, and converted from the charset it declares), written back labelled
// charset=utf-8 and encoded 7-bit safe; every other inline text part of the message that
// declares another charset converted to UTF-8 and labelled so too, so that no part of the
// message says another charset. The rest as GMime writes it back (headers as they were,
// other parts' content as it was encoded).
// nullopt when the message has no such part (or does not parse): keep the original then.
std::optional<std::string> edit_html_parts(
    std::string_view raw, const std::function<std::string(const std::string&)>& edit);

}  // namespace posthorn::mail
