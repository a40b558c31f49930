#include "mail/tracking.hpp"

#include <gtest/gtest.h>

#include <vector>

namespace posthorn::mail {
namespace {

Tracking both(std::vector<std::string>& seen) {
    Tracking t;
    t.pixel_url = "https://t.example/o/TOKEN";
    t.link = [&seen](const std::string& url) {
        seen.push_back(url);
        return "https://t.example/c/" + std::to_string(seen.size());
    };
    return t;
}

TEST(TrackHtml, RewritesWebLinksOnlyAndKeepsTheRestByteForByte) {
    const std::string html =
        "<html><head><title>x</title></head><body>\n<p>Hi&nbsp;<a "
        "href=\"https://a.example/x?y=1&amp;z=2\">A</a>"
        " <a href='http://b.example'>B</a> <a href=\"mailto:m@example.com\">M</a>"
        " <a href=\"tel:+1\">T</a> <a href=\"#top\">#</a> <A "
        "HREF=HTTPS://c.example>C</A></p>\n</body></html>";
    std::vector<std::string> seen;
    const auto out = track_html(html, both(seen));
    EXPECT_EQ(seen, (std::vector<std::string>{"https://a.example/x?y=1&z=2", "http://b.example",
                                              "HTTPS://c.example"}));
    EXPECT_NE(out.find("<a href=\"https://t.example/c/1\">A</a>"), std::string::npos) << out;
    EXPECT_NE(out.find("<a href=\"https://t.example/c/2\">B</a>"), std::string::npos) << out;
    EXPECT_NE(out.find("<A HREF=\"https://t.example/c/3\">C</A>"), std::string::npos) << out;
    EXPECT_NE(out.find("href=\"mailto:m@example.com\""), std::string::npos);
    EXPECT_NE(out.find("href=\"tel:+1\""), std::string::npos);
    EXPECT_NE(out.find("href=\"#top\""), std::string::npos);
    EXPECT_NE(out.find("Hi&nbsp;"), std::string::npos) << "untouched text stays as written";
    const auto pixel = out.find("<img src=\"https://t.example/o/TOKEN\"");
    ASSERT_NE(pixel, std::string::npos);
    EXPECT_EQ(out.substr(pixel).find("</body>") != std::string::npos, true) << "before </body>";
}

// The HTML5 parser reopens a link that a new paragraph closed (`<a href><p>…<p>`): the
// reopened <a> elements point at the same href in the source, which is rewritten once, and
// everything else stays as written. Before, each copy rewrote the same bytes again, over
// the edits before it: the HTML came out mangled. Found by tests/fuzz/track_html_fuzz.cpp.
TEST(TrackHtml, AReopenedLinkIsRewrittenOnce) {
    const std::string html =
        "<body><a href=\"https://a.example/\">one<p>two<p>three</a><p>four "
        "<a href=\"ht://x\"><p>five<a href=\"https://b.example/\">six</a></body>";
    std::vector<std::string> seen;
    const auto out = track_html(html, both(seen));
    EXPECT_EQ(seen, (std::vector<std::string>{"https://a.example/", "https://b.example/"}));
    std::string expected = html;
    expected.replace(expected.find("\"https://b.example/\""), 20, "\"https://t.example/c/2\"");
    expected.replace(expected.find("\"https://a.example/\""), 20, "\"https://t.example/c/1\"");
    expected.insert(expected.find("</body>"),
                    "<img src=\"https://t.example/o/TOKEN\" width=\"1\" height=\"1\" alt=\"\" "
                    "style=\"display:none\">");
    EXPECT_EQ(out, expected);
}

TEST(TrackHtml, PixelAtTheEndWithoutBodyAndNothingWhenOff) {
    const std::string frag = "<p>just a fragment <a href=\"https://x.example\">x</a></p>";
    Tracking t;
    t.pixel_url = "https://t.example/o/P";
    const auto out = track_html(frag, t);
    EXPECT_EQ(out.rfind(frag, 0), 0u) << "links untouched when click tracking is off";
    EXPECT_NE(out.find("<img src=\"https://t.example/o/P\""), std::string::npos);
    EXPECT_EQ(track_html(frag, Tracking{}), frag);
}

// HTML read in another charset and written as UTF-8 says so of itself; what says utf-8
// already, and everything else, is kept byte for byte.
TEST(DeclareUtf8, RewritesEveryCharsetDeclaration) {
    EXPECT_EQ(declare_utf8("<html><head><meta charset=iso-8859-1><title>x</title></head>"
                           "<body><p>caf\xC3\xA9</p></body></html>"),
              "<html><head><meta charset=\"utf-8\"><title>x</title></head>"
              "<body><p>caf\xC3\xA9</p></body></html>");
    EXPECT_EQ(declare_utf8("<meta http-equiv=\"Content-Type\" content=\"text/html; "
                           "charset=windows-1251\"><p>x</p>"),
              "<meta http-equiv=\"Content-Type\" content=\"text/html; charset=utf-8\"><p>x</p>");
    for (const char* kept : {"<meta charset=\"UTF-8\"><p>x</p>", "<p>no head at all</p>",
                             "<meta http-equiv=content-type content='text/html; charset=utf-8'>",
                             "<meta name=\"viewport\" content=\"width=device-width\"><p>x</p>"})
        EXPECT_EQ(declare_utf8(kept), kept);
}

}  // namespace
}  // namespace posthorn::mail
