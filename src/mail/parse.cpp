#include "mail/parse.hpp"

#include <algorithm>

#include "core/text.hpp"
#include "mail/detail/gmime.hpp"
#include "mail/detail/message_body.hpp"
#include "mail/tracking.hpp"

namespace posthorn::mail {

using detail::GObj;

namespace {

std::vector<ParsedAddress> addresses(InternetAddressList* list) {
    std::vector<ParsedAddress> out;
    if (!list) return out;
    for (int i = 0; i < internet_address_list_length(list); ++i) {
        InternetAddress* ia = internet_address_list_get_address(list, i);
        if (INTERNET_ADDRESS_IS_MAILBOX(ia)) {
            const char* name = internet_address_get_name(ia);
            const char* addr = internet_address_mailbox_get_addr(INTERNET_ADDRESS_MAILBOX(ia));
            out.push_back({name ? name : "", addr ? addr : ""});
        } else if (INTERNET_ADDRESS_IS_GROUP(ia)) {
            auto sub = addresses(internet_address_group_get_members(INTERNET_ADDRESS_GROUP(ia)));
            out.insert(out.end(), sub.begin(), sub.end());
        }
    }
    return out;
}

std::string decoded_content(GMimePart* part) {
    GMimeDataWrapper* content = g_mime_part_get_content(part);
    if (!content) return {};
    GObj<GMimeStream> mem(g_mime_stream_mem_new());
    g_mime_data_wrapper_write_to_stream(content, mem.get());
    GByteArray* bytes = g_mime_stream_mem_get_byte_array(GMIME_STREAM_MEM(mem.get()));
    return std::string(reinterpret_cast<const char*>(bytes->data), bytes->len);
}

void visit(GMimeObject* /*parent*/, GMimeObject* part, gpointer data) {
    auto* out = static_cast<ParsedMessage*>(data);
    if (!GMIME_IS_PART(part)) return;  // multiparts and message/rfc822 wrappers
    auto* p = GMIME_PART(part);
    GMimeContentType* ct = g_mime_object_get_content_type(part);
    const bool attachment = g_mime_part_is_attachment(p);
    if (!attachment && GMIME_IS_TEXT_PART(part)) {
        const bool plain = g_mime_content_type_is_type(ct, "text", "plain");
        const bool html = g_mime_content_type_is_type(ct, "text", "html");
        if ((plain && !out->text) || (html && !out->html)) {
            char* text = g_mime_text_part_get_text(GMIME_TEXT_PART(part));
            std::string value = text ? text : "";
            g_free(text);
            (plain ? out->text : out->html) = std::move(value);
            return;
        }
    }
    ParsedAttachment a;
    const char* fn = g_mime_part_get_filename(p);
    const char* cid = g_mime_part_get_content_id(p);
    char* type = g_mime_content_type_get_mime_type(ct);
    a.filename = fn ? fn : "";
    a.content_id = cid ? cid : "";
    a.content_type = type ? core::ascii_lower(type) : "application/octet-stream";
    g_free(type);
    a.content = decoded_content(p);
    out->attachments.push_back(std::move(a));
}

}  // namespace

ParsedMessage parse_message(std::string_view raw) {
    ParsedMessage out;
    GObj<GMimeStream> stream(g_mime_stream_mem_new_with_buffer(raw.data(), raw.size()));
    GObj<GMimeParser> parser(g_mime_parser_new_with_stream(stream.get()));
    GObj<GMimeMessage> msg(g_mime_parser_construct_message(parser.get(), nullptr));
    if (!msg) return out;
    out.from = addresses(g_mime_message_get_from(msg.get()));
    out.to = addresses(g_mime_message_get_to(msg.get()));
    out.cc = addresses(g_mime_message_get_cc(msg.get()));
    out.reply_to = addresses(g_mime_message_get_reply_to(msg.get()));
    if (const char* s = g_mime_message_get_subject(msg.get())) out.subject = s;
    if (const char* id = g_mime_message_get_message_id(msg.get())) out.message_id = id;
    GMimeHeaderList* headers = g_mime_object_get_header_list(GMIME_OBJECT(msg.get()));
    for (int i = 0; i < g_mime_header_list_get_count(headers); ++i) {
        GMimeHeader* h = g_mime_header_list_get_header_at(headers, i);
        const char* name = g_mime_header_get_name(h);
        const char* value = g_mime_header_get_value(h);
        out.headers.emplace_back(name ? name : "", value ? value : "");
    }
    g_mime_message_foreach(msg.get(), visit, &out);
    return out;
}

std::string_view header_block(std::string_view raw) {
    std::size_t pos = 0;
    while (pos < raw.size()) {
        const auto eol = raw.find('\n', pos);
        if (eol == std::string_view::npos) break;
        const auto line = raw.substr(pos, eol + 1 - pos);
        pos = eol + 1;
        if (line == "\r\n" || line == "\n") return raw.substr(0, pos);
    }
    return raw;
}

namespace {

struct HtmlEdit {
    const std::function<std::string(const std::string&)>* edit;
    int edited = 0;
};

bool is_utf8_label(const char* charset) {
    return charset &&
           (g_ascii_strcasecmp(charset, "utf-8") == 0 || g_ascii_strcasecmp(charset, "utf8") == 0);
}

// `bytes` converted to UTF-8 from `charset`; nullopt when iconv does not know the charset
// or the bytes are not text in it.
std::optional<std::string> convert_to_utf8(const std::string& bytes, const char* charset) {
    GError* error = nullptr;
    gsize written = 0;
    char* out = g_convert(bytes.data(), static_cast<gssize>(bytes.size()), "UTF-8",
                          g_mime_charset_iconv_name(charset), nullptr, &written, &error);
    if (!out) {
        g_clear_error(&error);
        return std::nullopt;
    }
    std::string text(out, written);
    g_free(out);
    return text;
}

// A text part's content as UTF-8: decoded from its transfer encoding, then converted from
// the charset it declares. Without a charset (RFC 2045 §5.2: us-ascii), with us-ascii or
// utf-8 that its 8-bit bytes belie, or with one iconv does not know, it is read as UTF-8 when
// it is valid UTF-8 and as windows-1252 (of which Latin-1 is a part) otherwise: what mail
// readers make of such text. Unlike g_mime_text_part_get_text, never fails on an unknown
// charset.
std::string text_as_utf8(GMimeTextPart* part) {
    std::string bytes = decoded_content(GMIME_PART(part));
    const char* charset = g_mime_text_part_get_charset(part);
    const bool labelled_ascii = !charset || g_ascii_strcasecmp(charset, "us-ascii") == 0;
    if (charset && !labelled_ascii && !is_utf8_label(charset))
        if (auto text = convert_to_utf8(bytes, charset)) return std::move(*text);
    if (g_utf8_validate(bytes.data(), static_cast<gssize>(bytes.size()), nullptr)) return bytes;
    return convert_to_utf8(bytes, "windows-1252").value_or(std::string());
}

// Every inline text part of an edited message goes out as UTF-8: the HTML parts as edited,
// the others converted when they declare another charset (RFC 2046 §4.1.2), so that no
// part's label contradicts another's or what an HTML part says of itself.
void edit_html(GMimeObject* /*parent*/, GMimeObject* part, gpointer data) {
    auto* e = static_cast<HtmlEdit*>(data);
    if (!GMIME_IS_TEXT_PART(part) || g_mime_part_is_attachment(GMIME_PART(part))) return;
    auto* text_part = GMIME_TEXT_PART(part);
    if (!g_mime_content_type_is_type(g_mime_object_get_content_type(part), "text", "html")) {
        if (!is_utf8_label(g_mime_text_part_get_charset(text_part)))
            detail::set_utf8_text(text_part, text_as_utf8(text_part));
        return;
    }
    // Written as UTF-8: so says its own <meta charset>, whatever it said before.
    const std::string edited = declare_utf8((*e->edit)(text_as_utf8(text_part)));
    detail::set_utf8_text(text_part, edited);
    ++e->edited;
}

}  // namespace

std::optional<std::string> edit_html_parts(
    std::string_view raw, const std::function<std::string(const std::string&)>& edit) {
    GObj<GMimeStream> stream(g_mime_stream_mem_new_with_buffer(raw.data(), raw.size()));
    GObj<GMimeParser> parser(g_mime_parser_new_with_stream(stream.get()));
    GObj<GMimeMessage> msg(g_mime_parser_construct_message(parser.get(), nullptr));
    if (!msg) return std::nullopt;
    HtmlEdit e{&edit};
    g_mime_message_foreach(msg.get(), edit_html, &e);
    if (e.edited == 0) return std::nullopt;
    return detail::write_to_string(GMIME_OBJECT(msg.get()), detail::crlf_options().get());
}

std::string add_fields(std::string_view raw, std::string_view first, std::string_view last) {
    const auto block = header_block(raw);
    // The header block without its empty line, and where the empty line begins.
    std::size_t end = block.size();
    if (block.ends_with("\r\n\r\n") || (block.size() == 2 && block == "\r\n"))
        end -= 2;
    else if (block.ends_with("\n\n") || block == "\n")
        end -= 1;
    std::string out;
    out.reserve(raw.size() + first.size() + last.size() + 2);
    out.append(first).append(raw.substr(0, end));
    if (end > 0 && raw[end - 1] != '\n') out.append("\r\n");  // a last field without CRLF
    out.append(last).append(raw.substr(end));
    return out;
}

std::string edit_headers(std::string_view raw, const std::vector<std::string>& remove,
                         const std::vector<std::pair<std::string, std::string>>& add) {
    std::string out;
    for (const auto& [name, value] : add) out += name + ": " + value + "\r\n";
    std::size_t pos = 0;
    bool dropping = false;
    while (pos < raw.size()) {
        auto eol = raw.find('\n', pos);
        const std::size_t next = eol == std::string_view::npos ? raw.size() : eol + 1;
        const auto line = raw.substr(pos, next - pos);
        if (line == "\r\n" || line == "\n") {  // end of the header block
            out.append(raw.substr(pos));
            return out;
        }
        const bool continuation = line.front() == ' ' || line.front() == '\t';
        if (!continuation) {
            const auto colon = line.find(':');
            const auto name = line.substr(0, colon == std::string_view::npos ? 0 : colon);
            dropping = std::any_of(remove.begin(), remove.end(), [&](const std::string& r) {
                return core::ascii_iequals(r, name);
            });
        }
        if (!dropping) out.append(line);
        pos = next;
    }
    return out;
}

}  // namespace posthorn::mail
