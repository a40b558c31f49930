// mail/tracking.hpp — open and click tracking in an HTML body (DESIGN §8). The HTML is
// parsed with a real HTML5 parser (gumbo) only to find where things are; the edits are made
// in the original text, so everything else stays byte for byte. http(s) links of <a href>
// are replaced (mailto:, tel:, anchors and everything else are left alone), and a 1×1 image
// goes before </body>, or at the end when there is none. Pure; thread-safe.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>

namespace posthorn::mail {

struct Tracking {
    std::optional<std::string> pixel_url;  // set: add the open pixel
    // set: the tracking URL for an original link (called once per link, in order)
    std::function<std::string(const std::string& url)> link;
};

std::string track_html(std::string_view html, const Tracking& tracking);

// The HTML with every charset it declares of itself made "utf-8": the value of each
// <meta charset>, and the charset parameter of each <meta http-equiv="Content-Type">'s
// content (HTML §4.2.5.4); the rest byte for byte. For HTML written out as UTF-8 after it
// was read in another charset, so that the document does not contradict its MIME label.
std::string declare_utf8(std::string_view html);

}  // namespace posthorn::mail
