#include "dns/testing/static_resolver.hpp"

#include <gtest/gtest.h>

#include <boost/asio/use_future.hpp>

namespace posthorn::dns {
namespace {

using boost::asio::ip::make_address;
using Addresses = std::vector<asio::ip::address>;

template <class T>
T run(asio::awaitable<T> op) {
    asio::io_context io;
    auto future = asio::co_spawn(io, std::move(op), asio::use_future);
    io.run();
    return future.get();
}

template <class T>
error_code error_of(const Result<T>& r) {
    return r ? error_code{} : r.error();
}

TEST(StaticResolver, AnswersWhatWasAdded) {
    StaticResolver zone;
    zone.add_txt("example.test", "v=spf1 -all")
        .add_txt("example.test", "other")
        .add_mx("example.test", "mx2.example.test", 20)
        .add_mx("example.test", "MX1.example.test.", 10)
        .add_address("mx1.example.test", make_address("2001:db8::1"))
        .add_address("mx1.example.test", make_address("192.0.2.1"))
        .add_cname("www.example.test", "Example.TEST.");

    auto txt = run(zone.txt("example.test"));
    ASSERT_TRUE(txt.has_value());
    EXPECT_EQ(*txt, (std::vector<std::string>{"v=spf1 -all", "other"}));

    auto mx = run(zone.mx("example.test"));
    ASSERT_TRUE(mx.has_value());
    EXPECT_EQ(*mx, (std::vector<MxRecord>{{10, "mx1.example.test"}, {20, "mx2.example.test"}}));

    auto addresses = run(zone.addresses("mx1.example.test"));
    ASSERT_TRUE(addresses.has_value());
    EXPECT_EQ(*addresses, (Addresses{make_address("192.0.2.1"), make_address("2001:db8::1")}));

    auto cname = run(zone.cname("www.example.test"));
    ASSERT_TRUE(cname.has_value());
    EXPECT_EQ(*cname, std::vector<std::string>{"example.test"});
}

TEST(StaticResolver, NamesCompareCaseInsensitivelyWithOrWithoutTheDot) {
    StaticResolver zone;
    zone.add_txt("Example.Test", "x");
    EXPECT_TRUE(run(zone.txt("EXAMPLE.test.")).has_value());
    EXPECT_TRUE(run(zone.txt("example.test")).has_value());
}

TEST(StaticResolver, UnknownIsNxdomainAndOtherTypesNoData) {
    StaticResolver zone;
    zone.add_txt("txt.example.test", "x");
    EXPECT_EQ(error_of(run(zone.txt("nope.example.test"))), errc::nxdomain);
    EXPECT_EQ(error_of(run(zone.mx("txt.example.test"))), errc::no_data);
    EXPECT_EQ(error_of(run(zone.addresses("txt.example.test"))), errc::no_data);
    EXPECT_EQ(error_of(run(zone.cname("txt.example.test"))), errc::no_data);
    EXPECT_TRUE(is_not_found(error_of(run(zone.mx("nope.example.test")))));
}

TEST(StaticResolver, FailuresApplyToEveryType) {
    StaticResolver zone;
    zone.add_mx("broken.test", "mx.broken.test").add_failure("broken.test", errc::servfail);
    zone.add_failure("slow.test", errc::timeout);
    EXPECT_EQ(error_of(run(zone.mx("broken.test"))), errc::servfail);
    EXPECT_EQ(error_of(run(zone.txt("slow.test"))), errc::timeout);
    EXPECT_EQ(error_of(run(zone.addresses("slow.test"))), errc::timeout);
}

TEST(StaticResolver, NullMx) {
    StaticResolver zone;
    zone.add_mx("nomail.test", ".", 0);
    auto mx = run(zone.mx("nomail.test"));
    ASSERT_TRUE(mx.has_value());
    EXPECT_EQ(*mx, (std::vector<MxRecord>{{0, ""}}));
}

TEST(StaticResolver, FollowsCnamesExceptForCnameQueries) {
    StaticResolver zone;
    zone.add_cname("alias.test", "target.test")
        .add_txt("target.test", "hello")
        .add_address("target.test", make_address("192.0.2.5"))
        .add_cname("dangling.test", "nowhere.test")
        .add_cname("loop1.test", "loop2.test")
        .add_cname("loop2.test", "loop1.test");
    EXPECT_EQ(*run(zone.txt("alias.test")), std::vector<std::string>{"hello"});
    EXPECT_EQ(*run(zone.addresses("alias.test")), Addresses{make_address("192.0.2.5")});
    EXPECT_EQ(error_of(run(zone.mx("alias.test"))), errc::no_data);
    EXPECT_EQ(*run(zone.cname("alias.test")), std::vector<std::string>{"target.test"});
    EXPECT_EQ(error_of(run(zone.cname("target.test"))), errc::no_data);
    EXPECT_EQ(error_of(run(zone.txt("dangling.test"))), errc::nxdomain);
    EXPECT_EQ(error_of(run(zone.txt("loop1.test"))), errc::servfail);
}

TEST(StaticResolver, UsableThroughTheInterface) {
    StaticResolver zone;
    zone.add_address("h.test", make_address("192.0.2.1"));
    Resolver& resolver = zone;
    EXPECT_TRUE(run(resolver.addresses("h.test")).has_value());
}

}  // namespace
}  // namespace posthorn::dns
