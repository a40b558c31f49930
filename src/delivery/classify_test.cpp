#include "delivery/classify.hpp"

#include <gtest/gtest.h>

#include <boost/asio/error.hpp>

#include "smtp/errors.hpp"

namespace posthorn::delivery {
namespace {

TEST(Classify, RepliesByTheirFirstDigit) {
    struct Case {
        const char* wire;
        Disposition want;
    };
    for (const auto& c : {Case{"250 2.0.0 ok\r\n", Disposition::delivered},
                          Case{"451 4.7.1 greylisted\r\n", Disposition::transient},
                          Case{"421 closing\r\n", Disposition::transient},
                          Case{"550 5.1.1 no such user\r\n", Disposition::bounced},
                          Case{"554-policy\r\n554 refused\r\n", Disposition::bounced}}) {
        auto r = smtp::parse_reply(c.wire);
        ASSERT_TRUE(r);
        auto o = classify_reply(*r);
        EXPECT_EQ(o.disposition, c.want) << c.wire;
        EXPECT_EQ(o.response, r->verbatim());
    }
}

TEST(Classify, ErrorsWithoutAReply) {
    EXPECT_EQ(classify_error(boost::asio::error::connection_refused, "connect").disposition,
              Disposition::transient);
    EXPECT_EQ(classify_error(smtp::errc::unexpected_eof, "DATA").disposition,
              Disposition::transient);
    auto tls = classify_error(smtp::errc::tls_unavailable, "mx.example.net");
    EXPECT_EQ(tls.disposition, Disposition::failed);
    EXPECT_NE(tls.response.find("TLS"), std::string::npos);
}

}  // namespace
}  // namespace posthorn::delivery
