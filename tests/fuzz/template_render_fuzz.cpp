// libFuzzer target for stored templates (src/mail/template.cpp, kainjow/mustache): an API
// user's Mustache, whatever it is, as each part of a template, rendered with variables that
// hold HTML. It must never crash; a template that passes the syntax check renders (or names
// what is missing); and unless the template itself asks for raw output ({{{ }}}, {{& }}, or
// other delimiters, which could spell them), a variable's HTML never reaches the html raw.
#include <boost/json/parse.hpp>

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <variant>

#include "mail/template.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    using namespace posthorn::mail;
    const std::string text(reinterpret_cast<const char*>(data), size);
    if (text.find("zqx") != std::string::npos) return 0;  // the marker of the variables
    static const auto vars =
        boost::json::parse(R"({"a":"<zqx>","n":1.5,"t":true,"f":false,"z":null,)"
                           R"("l":[{"a":"<zqx>"},"<zqx>",[1,2]],"o":{"b":"<zqx>","l":[]}})")
            .as_object();
    const TemplateParts parts{.subject = text, .html = text, .text = text};
    const bool parses = !template_syntax_error(parts).has_value();
    auto r = render_template(parts, {}, vars);
    if (!parses) return 0;
    if (const auto* out = std::get_if<RenderedParts>(&r)) {
        const bool may_be_raw =
            text.find_first_of("&=") != std::string::npos || text.find("{{{") != std::string::npos;
        if (!may_be_raw && out->html->find("<zqx>") != std::string::npos) __builtin_trap();
    }
    return 0;
}
