#include "api/send_request.hpp"

#include <fmt/format.h>
#include <boost/json/object.hpp>

#include <algorithm>
#include <array>
#include <cctype>

#include "core/text.hpp"
#include "crypto/keys.hpp"

namespace posthorn::api {

namespace json = boost::json;

namespace {

constexpr std::size_t kMaxSubjectChars = 255;
constexpr std::size_t kMaxFilenameBytes = 255;   // what file systems take
constexpr std::size_t kMaxContentIdBytes = 250;  // Content-ID: <cid> on one line
constexpr std::size_t kMaxIdempotencyKey = kMaxIdempotencyKeyBytes;
constexpr std::size_t kMaxTemplateRef = 200;  // a tpl_ id, or a name (at most 100 characters)

http::Response validation(std::string_view message) {
    return http::error_response(400, "VALIDATION_ERROR", message);
}

std::size_t utf8_chars(std::string_view s) {
    std::size_t n = 0;
    for (unsigned char c : s) n += (c & 0xC0) != 0x80;
    return n;
}

constexpr core::ByteSet kLineBreaks("\r\n");
bool has_crlf(std::string_view s) { return kLineBreaks.any_in(s); }

// What a header field cannot carry besides CR and LF (RFC 5322 §2.2, §3.2.5: printable
// characters and white space): the C0 controls but the tab, and DEL. For the message, the
// first one in `s` ("U+0000 NUL"); empty when there is none.
std::string control_char_in(std::string_view s) {
    static constexpr std::array<std::string_view, 32> kC0 = {
        "NUL", "SOH", "STX", "ETX", "EOT", "ENQ", "ACK", "BEL", "BS",  "HT",  "LF",
        "VT",  "FF",  "CR",  "SO",  "SI",  "DLE", "DC1", "DC2", "DC3", "DC4", "NAK",
        "SYN", "ETB", "CAN", "EM",  "SUB", "ESC", "FS",  "GS",  "RS",  "US"};
    for (const unsigned char c : s) {
        if (c == '\t' || (c >= 0x20 && c != 0x7f)) continue;
        const auto name = c == 0x7f ? std::string_view("DEL") : kC0[c];
        return fmt::format("U+{:04X} {}", static_cast<unsigned>(c), name);
    }
    return {};
}

// "<what> must not contain control characters (...)" when `s` holds one (after the
// line-break check, which has its own message); empty otherwise.
std::string control_char_error(std::string_view what, std::string_view s) {
    const auto found = control_char_in(s);
    if (found.empty()) return {};
    return std::string(what) + " must not contain control characters (it holds " + found +
           "; of U+0000-U+001F and U+007F only the tab is allowed)";
}

// Headers the service writes itself; a user-supplied one would clash or forge.
bool owned_header(std::string_view name) {
    const auto n = core::ascii_lower(name);
    // Received and Feedback-ID are posthorn's own (queue_email.cpp): one of each.
    static constexpr std::array<std::string_view, 13> kOwned = {
        "from",           "to",          "cc",         "bcc",
        "subject",        "date",        "message-id", "mime-version",
        "dkim-signature", "return-path", "reply-to",   "received",
        "feedback-id"};
    for (auto o : kOwned)
        if (n == o) return true;
    return n.rfind("content-", 0) == 0;
}

// RFC 6838 §4.2: type "/" subtype, each a restricted-name of 1 to 127 characters.
bool valid_media_type(std::string_view t) {
    auto restricted_name = [](std::string_view n) {
        if (n.empty() || n.size() > 127) return false;
        for (unsigned char c : n)
            if (!std::isalnum(c) &&
                std::string_view("!#$&-^_.+").find(static_cast<char>(c)) == std::string_view::npos)
                return false;
        return std::isalnum(static_cast<unsigned char>(n.front())) != 0;
    };
    const auto slash = t.find('/');
    return slash != std::string_view::npos && restricted_name(t.substr(0, slash)) &&
           restricted_name(t.substr(slash + 1));
}

// The longest run of a header value without a space or tab: GMime folds at whitespace only,
// and a longer run would make a line over the 998 octets of RFC 5322 §2.1.1.
constexpr std::size_t kMaxHeaderWord = 900;
bool has_unfoldable_word(std::string_view v) {
    std::size_t run = 0;
    for (char c : v) {
        run = (c == ' ' || c == '\t') ? 0 : run + 1;
        if (run > kMaxHeaderWord) return true;
    }
    return false;
}

bool valid_header_name(std::string_view name) {
    if (name.empty() || name.size() > 76) return false;  // RFC 5322 §2.2: printable, no colon
    for (unsigned char c : name)
        if (c < 33 || c > 126 || c == ':') return false;
    return true;
}

// string | string[] → strings (views into the document); `required` refuses absence and
// emptiness.
std::variant<std::vector<std::string_view>, http::Response> string_list(const json::object& o,
                                                                        std::string_view field,
                                                                        bool required) {
    std::vector<std::string_view> out;
    const auto* v = o.if_contains(field);
    if (!v || v->is_null()) {
        if (required) return validation(std::string(field) + " is required");
        return out;
    }
    if (v->is_string()) {
        out.emplace_back(v->get_string());
    } else if (v->is_array()) {
        for (const auto& el : v->get_array()) {
            if (!el.is_string())
                return validation(std::string(field) + " must be a string or an array of strings");
            out.emplace_back(el.get_string());
        }
    } else {
        return validation(std::string(field) + " must be a string or an array of strings");
    }
    if (required && out.empty()) return validation(std::string(field) + " must not be empty");
    return out;
}

std::variant<std::vector<mail::Mailbox>, http::Response> mailboxes(
    const std::vector<std::string_view>& in) {
    std::vector<mail::Mailbox> out;
    out.reserve(in.size());
    for (const auto s : in) {
        auto m = mail::parse_mailbox(s);
        if (auto* bad = std::get_if<mail::BadAddress>(&m))
            return http::error_response(400, "INVALID_EMAIL", bad->reason);
        out.push_back(std::get<mail::Mailbox>(std::move(m)));
    }
    return out;
}

std::optional<std::string> optional_string(const json::object& o, std::string_view field,
                                           std::string& error) {
    const auto* v = o.if_contains(field);
    if (!v || v->is_null()) return std::nullopt;
    if (!v->is_string()) {
        error = std::string(field) + " must be a string";
        return std::nullopt;
    }
    return std::string(v->as_string());
}

}  // namespace

namespace {

std::optional<http::Response> check_subject(const std::string& subject, const std::string& w) {
    if (subject.empty()) return validation(w + "subject must not be empty");
    if (utf8_chars(subject) > kMaxSubjectChars)
        return validation(w + "subject is longer than 255 characters");
    if (has_crlf(subject)) return validation(w + "subject must not contain line breaks");
    if (auto e = control_char_error(w + "subject", subject); !e.empty()) return validation(e);
    return std::nullopt;
}

std::optional<http::Response> check_bodies(mail::MessageSpec& m, const std::string& w) {
    for (const auto* body : {&m.html, &m.text})
        if (*body && body->value().find('\0') != std::string::npos)
            return validation(w + (body == &m.html ? "html" : "text") +
                              " must not contain NUL characters");
    if ((!m.html || m.html->empty()) && (!m.text || m.text->empty()))
        return validation(w.empty() ? "html or text is required"
                                    : w + "html and text are both empty");
    if (m.html && m.html->empty()) m.html.reset();
    if (m.text && m.text->empty()) m.text.reset();
    return std::nullopt;
}

}  // namespace

std::optional<http::Response> check_content(mail::MessageSpec& m, std::string_view what) {
    const std::string w(what);
    if (auto e = check_subject(m.subject, w)) return e;
    return check_bodies(m, w);
}

std::variant<std::optional<std::string>, http::Response> idempotency_key_of(
    const json::value& body) {
    if (!body.is_object()) return validation("body must be a JSON object");
    const auto* v = body.as_object().if_contains("idempotencyKey");
    if (!v || v->is_null()) return std::optional<std::string>{};
    if (!v->is_string() || v->as_string().empty() || v->as_string().size() > kMaxIdempotencyKey)
        return validation("idempotencyKey must be a string of 1 to 256 bytes");
    return std::optional<std::string>(std::string(v->as_string()));
}

std::variant<SendRequest, http::Response> parse_send_request(const json::value& body,
                                                             const SendLimits& limits) {
    if (!body.is_object()) return validation("body must be a JSON object");
    const auto& o = body.as_object();
    static constexpr std::array<std::string_view, 17> kFields = {
        "from", "to",       "subject",  "html",        "text",           "cc",
        "bcc",  "reply_to", "headers",  "attachments", "idempotencyKey", "tracking",
        "tags", "metadata", "template", "variables",   "scheduled_at"};
    for (const auto& [k, v] : o) {
        if (std::find(kFields.begin(), kFields.end(), std::string_view(k)) == kFields.end())
            return validation("unknown field '" + std::string(k) + "'");
    }
    SendRequest r;
    auto& m = r.message;

    // from
    const auto* from = o.if_contains("from");
    if (!from || !from->is_string()) return validation("from is required and must be a string");
    auto parsed_from = mailboxes({std::string_view(from->get_string())});
    if (auto* e = std::get_if<http::Response>(&parsed_from)) return std::move(*e);
    m.from = std::get<0>(parsed_from).front();

    // recipients
    auto fetch = [&](std::string_view field, bool required,
                     std::vector<mail::Mailbox>& out) -> std::optional<http::Response> {
        auto list = string_list(o, field, required);
        if (auto* e = std::get_if<http::Response>(&list)) return std::move(*e);
        auto boxes = mailboxes(std::get<0>(list));
        if (auto* e = std::get_if<http::Response>(&boxes)) return std::move(*e);
        out = std::get<0>(std::move(boxes));
        return std::nullopt;
    };
    if (auto e = fetch("to", true, m.to)) return std::move(*e);
    if (auto e = fetch("cc", false, m.cc)) return std::move(*e);
    if (auto e = fetch("bcc", false, r.bcc)) return std::move(*e);
    if (auto e = fetch("reply_to", false, m.reply_to)) return std::move(*e);
    const auto total = m.to.size() + m.cc.size() + r.bcc.size();
    if (total > static_cast<std::size_t>(limits.max_recipients))
        return http::error_response(400, "TOO_MANY_RECIPIENTS",
                                    "to, cc and bcc hold " + std::to_string(total) +
                                        " recipients; the limit is " +
                                        std::to_string(limits.max_recipients));

    // subject and bodies, or a template
    if (const auto* t = o.if_contains("template"); t && !t->is_null()) {
        for (const char* f : {"subject", "html", "text"})
            if (const auto* v = o.if_contains(f); v && !v->is_null())
                return validation(std::string("template and ") + f +
                                  " cannot both be given (the template renders subject, html "
                                  "and text)");
        if (!t->is_string() || t->as_string().empty() || t->as_string().size() > kMaxTemplateRef)
            return validation("template must be a template's id or name (a string of 1 to " +
                              std::to_string(kMaxTemplateRef) + " bytes)");
        TemplateRef ref{.ref = std::string(t->as_string()), .variables = {}};
        if (const auto* v = o.if_contains("variables"); v && !v->is_null()) {
            if (!v->is_object()) return validation("variables must be an object");
            ref.variables = v->as_object();
        }
        r.template_ref = std::move(ref);
    } else {
        if (const auto* v = o.if_contains("variables"); v && !v->is_null())
            return validation("variables are given only with a template");
        const auto* subject = o.if_contains("subject");
        if (!subject || !subject->is_string())
            return validation("subject is required and must be a string");
        m.subject = std::string(subject->as_string());
        if (auto e = check_subject(m.subject, "")) return std::move(*e);
        std::string error;
        m.html = optional_string(o, "html", error);
        if (!error.empty()) return validation(error);
        m.text = optional_string(o, "text", error);
        if (!error.empty()) return validation(error);
        if (auto e = check_bodies(m, "")) return std::move(*e);
    }
    std::string error;

    // custom headers
    if (const auto* h = o.if_contains("headers"); h && !h->is_null()) {
        if (!h->is_object()) return validation("headers must be an object of strings");
        for (const auto& [name, value] : h->as_object()) {
            if (!valid_header_name(name))
                return validation("headers: '" + std::string(name) +
                                  "' is not a header name (1 to 76 printable ASCII characters, "
                                  "no space, no control character, no ':')");
            if (owned_header(name))
                return validation("headers: " + std::string(name) +
                                  " is set by the service and cannot be given");
            if (!value.is_string())
                return validation("headers: the value of " + std::string(name) +
                                  " must be a string");
            const std::string_view text = value.as_string();
            if (has_crlf(text))
                return validation("headers: the value of " + std::string(name) +
                                  " must not contain line breaks");
            if (auto e = control_char_error("headers: the value of " + std::string(name), text);
                !e.empty())
                return validation(e);
            if (has_unfoldable_word(value.as_string()))
                return validation("headers: the value of " + std::string(name) + " has more than " +
                                  std::to_string(kMaxHeaderWord) +
                                  " characters without a space, which no line of a message can "
                                  "hold");
            m.headers.emplace_back(std::string(name), std::string(value.as_string()));
        }
    }

    // attachments
    if (const auto* a = o.if_contains("attachments"); a && !a->is_null()) {
        if (!a->is_array()) return validation("attachments must be an array");
        std::int64_t total_bytes = 0;
        std::size_t i = 0;
        for (const auto& el : a->as_array()) {
            const auto where = "attachments[" + std::to_string(i++) + "]";
            if (!el.is_object()) return validation(where + " must be an object");
            const auto& ao = el.as_object();
            for (const auto& [k, v] : ao)
                if (k != "filename" && k != "content" && k != "content_type" && k != "cid")
                    return validation(where + ": unknown field '" + std::string(k) + "'");
            mail::Attachment att;
            const auto* content = ao.if_contains("content");
            if (!content || !content->is_string())
                return validation(where + ".content is required (base64)");
            auto decoded = crypto::base64_decode(content->as_string());
            if (!decoded) return validation(where + ".content is not valid base64");
            att.content = std::move(*decoded);
            total_bytes += static_cast<std::int64_t>(att.content.size());
            auto fname = optional_string(ao, "filename", error);
            auto ctype = optional_string(ao, "content_type", error);
            auto cid = optional_string(ao, "cid", error);
            if (!error.empty()) return validation(where + "." + error);
            att.filename = fname.value_or("");
            att.content_type = ctype.value_or("");
            att.content_id = cid.value_or("");
            for (const auto* s : {&att.filename, &att.content_type, &att.content_id})
                if (s->find_first_of("\r\n\"") != std::string::npos)
                    return validation(where + ": names must not contain line breaks or quotes");
            if (auto e = control_char_error(where + ".filename", att.filename); !e.empty())
                return validation(e);
            if (!att.content_type.empty() && !valid_media_type(att.content_type))
                return validation(where + ".content_type must be a MIME type such as image/png");
            if (att.filename.size() > kMaxFilenameBytes)
                return validation(where + ".filename is longer than " +
                                  std::to_string(kMaxFilenameBytes) + " bytes");
            if (att.content_id.size() > kMaxContentIdBytes ||
                std::any_of(att.content_id.begin(), att.content_id.end(), [](unsigned char c) {
                    return c < 33 || c > 126 || c == '<' || c == '>';
                }))
                return validation(where + ".cid must be at most " +
                                  std::to_string(kMaxContentIdBytes) +
                                  " printable ASCII characters without spaces or angle brackets");
            m.attachments.push_back(std::move(att));
        }
        if (total_bytes > limits.max_attachment_bytes)
            return http::error_response(413, "PAYLOAD_TOO_LARGE",
                                        "attachments hold " + std::to_string(total_bytes) +
                                            " bytes; the limit is " +
                                            std::to_string(limits.max_attachment_bytes));
    }

    // tracking
    if (const auto* t = o.if_contains("tracking"); t && !t->is_null()) {
        if (!t->is_object()) return validation("tracking must be an object");
        for (const auto& [k, v] : t->as_object()) {
            if (k != "open" && k != "click")
                return validation("tracking: unknown field '" + std::string(k) + "'");
            if (!v.is_bool())
                return validation("tracking." + std::string(k) + " must be true or false");
            (k == "open" ? r.track_opens : r.track_clicks) = v.as_bool();
        }
    }

    // tags and metadata
    if (auto e = read_json_labels(o.if_contains("tags"), o.if_contains("metadata"), r.labels))
        return validation(*e);

    // scheduled_at: null or absent sends at once.
    if (const auto* at = o.if_contains("scheduled_at"); at && !at->is_null()) {
        if (!at->is_string())
            return validation("scheduled_at must be a string (ISO 8601 with an offset)");
        auto when = parse_scheduled_at("scheduled_at", at->get_string());
        if (auto* msg = std::get_if<std::string>(&when)) return validation(*msg);
        r.scheduled_at = std::get<UnixMs>(when);
    }

    auto key = idempotency_key_of(body);
    if (auto* e = std::get_if<http::Response>(&key)) return std::move(*e);
    r.idempotency_key = std::get<0>(std::move(key));
    return r;
}

std::variant<UnixMs, std::string> parse_scheduled_at(std::string_view field,
                                                     std::string_view text) {
    auto bad = [&] {
        return std::string(field) +
               " must be an ISO 8601 date and time with an offset, e.g. "
               "2026-11-28T09:00:00+01:00 or 2026-11-28T08:00:00Z (it is '" +
               std::string(text.substr(0, 64)) + "')";
    };
    const auto n = text.size();
    const bool zoned = (n > 0 && text.back() == 'Z') ||
                       (n >= 6 && (text[n - 6] == '+' || text[n - 6] == '-') && text[n - 3] == ':');
    if (text.find('T') == std::string_view::npos || !zoned) return bad();
    const auto at = parse_iso8601(text);
    if (!at) return bad();
    return *at;
}

}  // namespace posthorn::api
