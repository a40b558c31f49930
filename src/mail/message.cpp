#include "mail/message.hpp"

#include <mutex>

#include "core/text.hpp"
#include "core/time.hpp"
#include "crypto/keys.hpp"
#include "mail/detail/message_body.hpp"

namespace posthorn::mail {

using detail::GObj;

namespace {

GObj<GMimeObject> text_part(const char* subtype, const std::string& content) {
    GObj<GMimeTextPart> part(g_mime_text_part_new_with_subtype(subtype));
    detail::set_utf8_text(part.get(), content);
    return GObj<GMimeObject>(GMIME_OBJECT(part.release()));
}

GObj<GMimeObject> attachment_part(const Attachment& a) {
    std::string type = a.content_type.empty() ? "application/octet-stream" : a.content_type;
    const auto slash = type.find('/');
    const std::string major = type.substr(0, slash);
    const std::string minor = slash == std::string::npos ? "octet-stream" : type.substr(slash + 1);
    GObj<GMimePart> part(g_mime_part_new_with_type(major.c_str(), minor.c_str()));
    GObj<GMimeStream> stream(g_mime_stream_mem_new_with_buffer(a.content.data(), a.content.size()));
    GObj<GMimeDataWrapper> wrapper(
        g_mime_data_wrapper_new_with_stream(stream.get(), GMIME_CONTENT_ENCODING_DEFAULT));
    g_mime_part_set_content(part.get(), wrapper.get());
    g_mime_part_set_content_encoding(part.get(), GMIME_CONTENT_ENCODING_BASE64);
    if (!a.content_id.empty()) {
        g_mime_object_set_disposition(GMIME_OBJECT(part.get()), GMIME_DISPOSITION_INLINE);
        g_mime_part_set_content_id(part.get(), a.content_id.c_str());
        if (!a.filename.empty()) g_mime_part_set_filename(part.get(), a.filename.c_str());
        g_mime_object_set_disposition(GMIME_OBJECT(part.get()), GMIME_DISPOSITION_INLINE);
    } else {
        g_mime_part_set_filename(part.get(),
                                 a.filename.empty() ? "attachment" : a.filename.c_str());
    }
    return GObj<GMimeObject>(GMIME_OBJECT(part.release()));
}

GObj<GMimeObject> multipart(const char* subtype, const std::vector<GObj<GMimeObject>>& parts) {
    GObj<GMimeMultipart> mp(g_mime_multipart_new_with_subtype(subtype));
    for (const auto& p : parts) g_mime_multipart_add(mp.get(), p.get());  // adds its own reference
    return GObj<GMimeObject>(GMIME_OBJECT(mp.release()));
}

}  // namespace

void init() {
    static std::once_flag once;
    std::call_once(once, [] { g_mime_init(); });
}

namespace detail {

// The transfer encoding that g_mime_part_get_best_content_encoding picks under the 7-bit
// constraint, worked out here in one pass (GMime's runs a filter over the content): base64
// when there is a NUL or 17% or more of the bytes are 8-bit; quoted-printable for fewer
// 8-bit bytes, for a line over 998 octets, for a line that starts with "From " (which
// mbox readers would mangle), or for a carriage return that does not end a line (RFC 2045
// §2.7: in 7bit data CR occurs only before LF; a bare CR on the wire is what SMTP
// smuggling is made of, and servers refuse it; quoted-printable writes it as =0D);
// otherwise none (7bit, no header). Stricter there than GMime, which sends a bare CR as it is.
GMimeContentEncoding best_encoding(std::string_view text) {
    if (text.find('\0') != std::string_view::npos) return GMIME_CONTENT_ENCODING_BASE64;
    if (!core::is_ascii(text)) {
        std::size_t eight_bit = 0;
        for (unsigned char c : text) eight_bit += c >= 0x80 ? 1 : 0;
        const auto limit = static_cast<std::size_t>(static_cast<double>(text.size()) * 0.17);
        return eight_bit >= limit ? GMIME_CONTENT_ENCODING_BASE64
                                  : GMIME_CONTENT_ENCODING_QUOTEDPRINTABLE;
    }
    for (std::size_t pos = 0; pos < text.size();) {
        auto eol = text.find('\n', pos);
        if (eol == std::string_view::npos) eol = text.size();
        if (eol - pos > 998 || text.substr(pos, 5) == "From ")
            return GMIME_CONTENT_ENCODING_QUOTEDPRINTABLE;
        // Within the line only: a search to the end of the text from every line would
        // read a long text once per line.
        const auto line = text.substr(pos, eol - pos);
        const auto cr = line.find('\r');
        if (cr != std::string_view::npos && (cr + 1 != line.size() || eol == text.size()))
            return GMIME_CONTENT_ENCODING_QUOTEDPRINTABLE;
        pos = eol + 1;
    }
    return GMIME_CONTENT_ENCODING_DEFAULT;
}

void set_utf8_text(GMimeTextPart* part, std::string_view text) {
    // What g_mime_text_part_set_text does, without its charset guess, which steps through
    // the text character by character and labels a text of Latin-1 letters iso-8859-1
    // (converting it): the text is UTF-8 and is labelled so, whatever letters it holds, so
    // that a part's label never contradicts what it says of itself (an HTML
    // <meta charset=utf-8>). ASCII is UTF-8 too.
    GObj<GMimeStream> stream(g_mime_stream_mem_new_with_buffer(text.data(), text.size()));
    GObj<GMimeDataWrapper> wrapper(
        g_mime_data_wrapper_new_with_stream(stream.get(), GMIME_CONTENT_ENCODING_DEFAULT));
    auto* p = GMIME_PART(part);
    g_mime_part_set_content(p, wrapper.get());
    g_mime_text_part_set_charset(part, "utf-8");
    g_mime_part_set_content_encoding(p, best_encoding(text));
}

GObj<InternetAddressList> address_list(std::span<const Mailbox> list) {
    GObj<InternetAddressList> addresses(internet_address_list_new());
    for (const auto& m : list) {
        const auto address = m.address();
        GObj<InternetAddress> mailbox(internet_address_mailbox_new(
            m.name.empty() ? nullptr : m.name.c_str(), address.c_str()));
        // GMime writes a mailbox's address with its domain in IDNA form, which it works out
        // with an idn2 lookup (NFC normalisation included) per address of every message; our
        // domains are canonical A-labels already (mail/address.hpp), so that form is the
        // address itself: given here, in the field GMime keeps it in (public in its header).
        INTERNET_ADDRESS_MAILBOX(mailbox.get())->idn_addr = g_strdup(address.c_str());
        internet_address_list_add(addresses.get(), mailbox.get());  // adds its own reference
    }
    return addresses;
}

GObj<GMimeObject> message_body(const MessageSpec& spec) {
    std::vector<GObj<GMimeObject>> inline_parts, files;
    for (const auto& a : spec.attachments)
        (a.content_id.empty() || !spec.html ? files : inline_parts).push_back(attachment_part(a));

    // The HTML, wrapped in multipart/related with its inline images (RFC 2387).
    GObj<GMimeObject> html;
    if (spec.html) {
        html = text_part("html", *spec.html);
        if (!inline_parts.empty()) {
            inline_parts.insert(inline_parts.begin(), std::move(html));
            html = multipart("related", inline_parts);
            g_mime_object_set_content_type_parameter(html.get(), "type", "text/html");
        }
    }
    GObj<GMimeObject> body;
    if (spec.text && html) {
        std::vector<GObj<GMimeObject>> alt;
        alt.push_back(text_part("plain", *spec.text));
        alt.push_back(std::move(html));
        body = multipart("alternative", alt);
    } else if (html) {
        body = std::move(html);
    } else {
        body = text_part("plain", spec.text.value_or(""));
    }
    if (!files.empty()) {
        files.insert(files.begin(), std::move(body));
        body = multipart("mixed", files);
    }
    return body;
}

}  // namespace detail

namespace {

// What GMime's newline filter for the wire does: a line feed not preceded by a carriage
// return becomes CRLF; everything else is kept. For content, and for GMime's folding
// functions, which end lines in LF whatever the format options say.
void append_crlf_content(std::string& out, std::string_view text) {
    out.reserve(out.size() + text.size() + text.size() / 32);
    std::size_t from = 0;
    for (auto lf = text.find('\n'); lf != std::string_view::npos; lf = text.find('\n', lf + 1)) {
        if (lf > 0 && text[lf - 1] == '\r') continue;
        out.append(text.substr(from, lf - from)).append("\r\n");
        from = lf + 1;
    }
    out.append(text.substr(from));
}

// Whether GMime writes this mailbox as it is: a display name of ASCII letters and digits
// with single spaces between words (no quoting, no encoded word), and an address of ASCII
// atom characters and dots.
bool plain_mailbox(const Mailbox& m, std::string_view address) {
    auto letter_or_digit = [](unsigned char c) {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
    };
    for (std::size_t i = 0; i < m.name.size(); ++i) {
        const auto c = static_cast<unsigned char>(m.name[i]);
        if (letter_or_digit(c)) continue;
        if (c == ' ' && i > 0 && i + 1 < m.name.size() && m.name[i + 1] != ' ') continue;
        return false;
    }
    static constexpr std::string_view kAtomSigns = "!#$%&'*+-/=?^_`{|}~.@";
    for (unsigned char c : address)
        if (!letter_or_digit(c) && kAtomSigns.find(static_cast<char>(c)) == std::string_view::npos)
            return false;
    return true;
}

void append_addresses(std::string& out, GMimeFormatOptions* options, const char* name,
                      std::span<const Mailbox> list) {
    if (list.empty()) return;
    // Plain mailboxes on a line that needs no folding: the bytes GMime's encoder writes for
    // them, without its address objects (a test holds the two together).
    std::string simple = std::string(name) + ": ";
    bool plain = true;
    for (std::size_t i = 0; plain && i < list.size(); ++i) {
        const auto address = list[i].address();
        plain = plain_mailbox(list[i], address);
        if (i > 0) simple += ", ";
        if (list[i].name.empty())
            simple += address;
        else
            simple.append(list[i].name).append(" <").append(address).append(">");
    }
    if (plain && simple.size() <= 76) {
        out.append(simple).append("\r\n");
        return;
    }
    auto addresses = detail::address_list(list);
    // GMime's own encoder of address headers: RFC 2047 for the names, folded from the
    // column where the value starts, the line ended as the options say.
    GString* line = g_string_new(name);
    g_string_append(line, ": ");
    internet_address_list_encode(addresses.get(), options, line);
    out.append(line->str, line->len);
    g_string_free(line, TRUE);
}

// Printable ASCII words with one space between them and nothing that could be read as an
// RFC 2047 word ("=?"): GMime's encoder leaves such a value as it is.
bool plain_unstructured(std::string_view value) {
    if (value.empty() || value.front() == ' ' || value.back() == ' ') return false;
    if (value.find("=?") != std::string_view::npos) return false;
    for (std::size_t i = 0; i < value.size(); ++i) {
        const auto c = static_cast<unsigned char>(value[i]);
        if (c == ' ' ? value[i - 1] == ' ' : (c < 0x21 || c > 0x7e)) return false;
    }
    return true;
}

void append_unstructured(std::string& out, GMimeFormatOptions* options, const std::string& name,
                         const std::string& value) {
    // A plain value on a line that needs no folding: the bytes GMime's encoder and folder
    // write for it, without their two allocations and passes (a test holds the two together).
    if (name.size() + 2 + value.size() <= 76 && plain_unstructured(value)) {
        out.append(name).append(": ").append(value).append("\r\n");
        return;
    }
    char* encoded = g_mime_utils_header_encode_text(options, value.c_str(), "utf-8");
    const std::string line = name + ": " + encoded;
    g_free(encoded);
    char* folded = g_mime_utils_unstructured_header_fold(nullptr, options, line.c_str());
    append_crlf_content(out, folded);
    g_free(folded);
}

// The message's header block, in the conventional order, each field encoded and folded by
// GMime's functions for its kind, or, where those would leave it as it is, written directly
// (as a GMimeMessage would write it, byte for byte: a test holds the two together). Without a
// GMimeMessage: with its header list, header objects and six address lists, created and destroyed
// per message, it took two fifths of the build.
std::string header_block(const MessageSpec& spec, GMimeFormatOptions* options) {
    std::string out = spec.trace;
    out.append("Date: ").append(format_rfc5322(spec.date)).append("\r\n");
    append_addresses(out, options, "From", {&spec.from, 1});
    append_addresses(out, options, "Reply-To", spec.reply_to);
    append_unstructured(out, options, "Subject", spec.subject);
    append_addresses(out, options, "To", spec.to);
    append_addresses(out, options, "Cc", spec.cc);
    out.append("Message-Id: <").append(spec.message_id).append(">\r\n");
    for (const auto& [name, value] : spec.headers) append_unstructured(out, options, name, value);
    out.append(spec.service_fields);
    out.append("MIME-Version: 1.0\r\n");
    return out;
}

// A text part as GMime's objects write it (text_part() above, written with CRLF options):
// its Content-Type and, unless 7bit, Content-Transfer-Encoding, then the content encoded
// by GMime's encoder.
void append_text_part(std::string& out, std::string_view subtype, std::string_view content) {
    out.append("Content-Type: text/").append(subtype).append("; charset=utf-8\r\n");
    const auto encoding = detail::best_encoding(content);
    if (encoding == GMIME_CONTENT_ENCODING_DEFAULT) {
        out += "\r\n";
        append_crlf_content(out, content);
        return;
    }
    out.append("Content-Transfer-Encoding: ")
        .append(g_mime_content_encoding_to_string(encoding))
        .append("\r\n\r\n");
    GMimeEncoding state;
    g_mime_encoding_init_encode(&state, encoding);
    std::string encoded(g_mime_encoding_outlen(&state, content.size()), '\0');
    encoded.resize(g_mime_encoding_flush(&state, content.data(), content.size(), encoded.data()));
    append_crlf_content(out, encoded);
}

// A boundary as g_mime_multipart_set_boundary makes one: "=-" and 16 random bytes in
// base64, of which the encoder's step writes the first 15 (20 characters).
std::string new_boundary() {
    const auto random = crypto::random_string(16);
    unsigned char encoded[32];
    int state = 0;
    guint32 save = 0;
    const auto n =
        g_mime_encoding_base64_encode_step(reinterpret_cast<const unsigned char*>(random.data()),
                                           random.size(), encoded, &state, &save);
    return "=-" + std::string(reinterpret_cast<const char*>(encoded), n);
}

// The MIME entity of a message without attachments (a text part, an HTML part, or both in
// multipart/alternative), written here with GMime's encoders: the bytes that GMime's objects
// write (BuildMessage.SameBytesAsAGMimeMessage holds the two together), without the dozen
// GObjects (parts, header lists, content types, streams, filters) made and destroyed for
// it per message, which took a quarter of a send's instructions.
void append_simple_body(std::string& out, const MessageSpec& spec) {
    if (spec.text && spec.html) {
        const auto boundary = new_boundary();
        out.append("Content-Type: multipart/alternative; boundary=\"")
            .append(boundary)
            .append("\"\r\n\r\n--")
            .append(boundary)
            .append("\r\n");
        append_text_part(out, "plain", *spec.text);
        out.append("\r\n--").append(boundary).append("\r\n");
        append_text_part(out, "html", *spec.html);
        out.append("\r\n--").append(boundary).append("--\r\n");
    } else if (spec.html) {
        append_text_part(out, "html", *spec.html);
    } else {
        append_text_part(out, "plain", spec.text ? std::string_view(*spec.text) : "");
    }
}

}  // namespace

std::string build_message(const MessageSpec& spec) {
    const auto options = detail::crlf_options();
    std::string out = header_block(spec, options.get());
    if (spec.attachments.empty())
        append_simple_body(out, spec);
    else
        out += detail::write_to_string(detail::message_body(spec).get(), options.get());
    // A message written by GMime ends in a newline; an entity alone ends where its content does.
    if (!out.ends_with("\r\n")) out += "\r\n";
    return out;
}

}  // namespace posthorn::mail
