#include "smtp/reply.hpp"

#include <gtest/gtest.h>

#include "smtp/errors.hpp"

namespace posthorn::smtp {
namespace {

TEST(ParseReply, KeepsEveryLineOfAMultilineReply) {
    auto r = parse_reply("250-mx.example.net\r\n250-PIPELINING\r\n250 SIZE 35882577\r\n");
    ASSERT_TRUE(r);
    EXPECT_EQ(r->code, 250);
    ASSERT_EQ(r->lines.size(), 3u);
    EXPECT_EQ(r->lines[2], "SIZE 35882577");
    EXPECT_EQ(r->verbatim(), "250-mx.example.net\r\n250-PIPELINING\r\n250 SIZE 35882577");
}

TEST(ParseReply, ClassifiesCodes) {
    EXPECT_TRUE(parse_reply("354 go ahead\r\n")->positive());
    EXPECT_TRUE(parse_reply("451 4.7.1 try later\r\n")->transient());
    EXPECT_TRUE(parse_reply("550 5.1.1 no such user\r\n")->permanent());
    EXPECT_EQ(parse_reply("250\r\n")->code, 250);
}

TEST(ParseReply, RefusesWhatIsNotAReply) {
    EXPECT_EQ(parse_reply("hello\r\n").error(), errc::malformed_reply);
    EXPECT_EQ(parse_reply("25\r\n").error(), errc::malformed_reply);
    EXPECT_EQ(parse_reply("250-a\r\n251 b\r\n").error(), errc::malformed_reply);
    EXPECT_EQ(parse_reply("250_x\r\n").error(), errc::malformed_reply);
    EXPECT_EQ(parse_reply("650 x\r\n").error(), errc::malformed_reply);
    EXPECT_EQ(parse_reply("250-unfinished\r\n").error(), errc::unexpected_eof);
    EXPECT_EQ(parse_reply("250 " + std::string(5000, 'x')).error(), errc::line_too_long);
    std::string many;
    for (int i = 0; i < 200; ++i) many += "250-x\r\n";
    EXPECT_EQ(parse_reply(many).error(), errc::line_too_long);
}

}  // namespace
}  // namespace posthorn::smtp
