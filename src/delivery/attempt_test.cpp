#include "delivery/attempt.hpp"

#include <gtest/gtest.h>

#include <boost/asio/error.hpp>

#include "smtp/errors.hpp"

namespace posthorn::delivery {
namespace {

using domain::Trouble;

TEST(Attempt, RepliesAreKeptVerbatimWithTheirStage) {
    auto r = smtp::parse_reply("554-policy\r\n554 5.7.1 refused\r\n");
    ASSERT_TRUE(r);
    const auto a = from_reply(*r, Stage::rcpt);
    EXPECT_EQ(a.stage, Stage::rcpt);
    EXPECT_EQ(a.trouble, Trouble::none);
    EXPECT_EQ(a.code, 554);
    EXPECT_EQ(a.text, r->verbatim());
}

TEST(Attempt, ErrorsWithoutAReplyBecomeTroubles) {
    EXPECT_EQ(from_error(boost::asio::error::connection_refused, "connect", Stage::connect).trouble,
              Trouble::network);
    EXPECT_EQ(from_error(smtp::errc::unexpected_eof, "DATA", Stage::data).trouble,
              Trouble::network);
    EXPECT_EQ(from_error(smtp::errc::tls_failed, "mx", Stage::connect).trouble,
              Trouble::tls_failed);
    EXPECT_EQ(from_error(smtp::errc::smtputf8_unsupported, "mx", Stage::mail).trouble,
              Trouble::smtputf8_unsupported);
    const auto tls = from_error(smtp::errc::tls_unavailable, "mx.example.net", Stage::connect);
    EXPECT_EQ(tls.trouble, Trouble::tls_unavailable);
    EXPECT_NE(tls.text.find("TLS"), std::string::npos);
    EXPECT_EQ(tls.text.rfind("mx.example.net: ", 0), 0u);
}

}  // namespace
}  // namespace posthorn::delivery
