// libFuzzer target for the rewrite of an email's HTML for open and click tracking
// (src/mail/tracking.cpp, gumbo): an API user's HTML, whatever it is. It must never crash,
// the open pixel goes in once, and every link handed out for a tracked href is in the
// output once (so that no rewrite lands inside another or is lost). The same HTML through
// declare_utf8 (the charset declarations of an edited part): it must never crash, and a
// second pass finds nothing left to change.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "mail/tracking.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    using namespace posthorn::mail;
    const std::string_view html(reinterpret_cast<const char*>(data), size);
    if (html.find("zqx") != std::string_view::npos) return 0;  // the marker of our URLs
    int links = 0;
    Tracking t;
    t.pixel_url = "https://t.example/zqx/o/pixel";
    t.link = [&links](const std::string&) {
        return "https://t.example/zqx/c/" + std::to_string(links++) + "/";
    };
    const auto out = track_html(html, t);
    auto count = [&out](const std::string& s) {
        int n = 0;
        for (auto p = out.find(s); p != std::string::npos; p = out.find(s, p + 1)) ++n;
        return n;
    };
    if (count(*t.pixel_url) != 1) __builtin_trap();
    for (int i = 0; i < links; ++i)
        if (count("https://t.example/zqx/c/" + std::to_string(i) + "/") != 1) __builtin_trap();
    if (count("zqx") != 1 + links) __builtin_trap();
    const auto declared = declare_utf8(out);
    if (declare_utf8(declared) != declared) __builtin_trap();
    return 0;
}
