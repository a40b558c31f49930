#include "dns/detail/replies.hpp"

#include <gtest/gtest.h>

#include "dns/detail/ares.hpp"
#include "dns/detail/wire.hpp"
#include "dns/testing/message_builder.hpp"

namespace posthorn::dns::detail {
namespace {

using boost::asio::ip::make_address;
using testing::Bytes;
using testing::encode_name;
using testing::MessageBuilder;
using testing::mx_rdata;
using testing::txt_rdata;
using Addresses = std::vector<boost::asio::ip::address>;

template <class T>
error_code error_of(const Result<T>& r) {
    return r ? error_code{} : r.error();
}

TEST(TxtReply, JoinsTheStringsOfOneRecordAndKeepsRecordsApart) {
    const std::string a(255, 'a'), b(255, 'b'), c(90, 'c');
    auto m = MessageBuilder{}
                 .question("txt.example.test", kTypeTxt)
                 .answer("txt.example.test", kTypeTxt, txt_rdata({"v=spf1 ", "-all"}))
                 .answer("txt.example.test", kTypeTxt, txt_rdata({a, b, c}))
                 .answer("txt.example.test", kTypeTxt, txt_rdata({""}))
                 .build();
    auto r = txt_reply(ARES_SUCCESS, m);
    ASSERT_TRUE(r.has_value()) << r.error().message();
    ASSERT_EQ(r->size(), 3u);
    EXPECT_EQ((*r)[0], "v=spf1 -all");
    EXPECT_EQ((*r)[1], a + b + c);
    EXPECT_EQ((*r)[2], "");
}

TEST(TxtReply, KeepsBinaryOctets) {
    const std::string bin{"a\0b\xff", 4};
    auto m = MessageBuilder{}
                 .question("t.example.test", kTypeTxt)
                 .answer("t.example.test", kTypeTxt, txt_rdata({bin}))
                 .build();
    auto r = txt_reply(ARES_SUCCESS, m);
    ASSERT_TRUE(r.has_value());
    EXPECT_EQ(*r, std::vector<std::string>{bin});
}

TEST(TxtReply, OnlyACnameIsNoData) {
    auto m = MessageBuilder{}
                 .question("alias.example.test", kTypeTxt)
                 .answer("alias.example.test", kTypeCname, encode_name("t.example.test"))
                 .build();
    EXPECT_EQ(error_of(txt_reply(ARES_SUCCESS, m)), errc::no_data);
}

TEST(TxtReply, PassesFailuresOn) {
    EXPECT_EQ(error_of(txt_reply(ARES_ENOTFOUND, {})), errc::nxdomain);
    EXPECT_EQ(error_of(txt_reply(ARES_ENODATA, {})), errc::no_data);
    EXPECT_EQ(error_of(txt_reply(ARES_SUCCESS, Bytes{1, 2, 3})), errc::bad_response);
}

TEST(MxReply, SortsByPreferenceFoldsCaseAndReadsNullMx) {
    auto m = MessageBuilder{}
                 .question("example.test", kTypeMx)
                 .answer("example.test", kTypeMx, mx_rdata(20, "MX2.Example.TEST"))
                 .answer("example.test", kTypeMx, mx_rdata(10, "b.example.test"))
                 .answer("example.test", kTypeMx, mx_rdata(10, "a.example.test"))
                 .answer("example.test", kTypeMx, mx_rdata(0, "."))
                 .build();
    auto r = mx_reply(ARES_SUCCESS, m);
    ASSERT_TRUE(r.has_value()) << r.error().message();
    EXPECT_EQ(
        *r,
        (std::vector<MxRecord>{
            {0, ""}, {10, "b.example.test"}, {10, "a.example.test"}, {20, "mx2.example.test"}}));
}

TEST(MxReply, PassesFailuresOn) {
    EXPECT_EQ(error_of(mx_reply(ARES_ESERVFAIL, {})), errc::servfail);
    auto m = MessageBuilder{}.question("example.test", kTypeMx).build();
    EXPECT_EQ(error_of(mx_reply(ARES_SUCCESS, m)), errc::no_data);
}

TEST(AddressReplies, ReadEveryAddress) {
    MessageBuilder b;
    b.question("many.example.test", kTypeA);
    for (std::uint8_t i = 1; i <= 40; ++i) {
        b.answer("many.example.test", kTypeA, Bytes{192, 0, 2, i});
    }
    auto r = a_reply(ARES_SUCCESS, b.build());
    ASSERT_TRUE(r.has_value()) << r.error().message();
    ASSERT_EQ(r->size(), 40u);
    EXPECT_EQ(r->front(), make_address("192.0.2.1"));
    EXPECT_EQ(r->back(), make_address("192.0.2.40"));

    Bytes v6 = {0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1};
    auto m6 = MessageBuilder{}
                  .question("h.example.test", kTypeAaaa)
                  .answer("h.example.test", kTypeAaaa, v6)
                  .build();
    auto r6 = aaaa_reply(ARES_SUCCESS, m6);
    ASSERT_TRUE(r6.has_value()) << r6.error().message();
    EXPECT_EQ(*r6, Addresses{make_address("2001:db8::1")});
}

TEST(AddressReplies, FollowTheCnameAndIgnoreOtherOwners) {
    auto m = MessageBuilder{}
                 .question("alias.example.test", kTypeA)
                 .answer("alias.example.test", kTypeCname, encode_name("t.example.test"))
                 .answer("t.example.test", kTypeA, Bytes{192, 0, 2, 9})
                 .answer("unrelated.example.test", kTypeA, Bytes{192, 0, 2, 66})
                 .build();
    auto r = a_reply(ARES_SUCCESS, m);
    ASSERT_TRUE(r.has_value()) << r.error().message();
    EXPECT_EQ(*r, Addresses{make_address("192.0.2.9")});
}

TEST(AddressReplies, ACnameWithoutAddressesIsNoData) {
    auto m = MessageBuilder{}
                 .question("alias.example.test", kTypeA)
                 .answer("alias.example.test", kTypeCname, encode_name("t.example.test"))
                 .build();
    EXPECT_EQ(error_of(a_reply(ARES_SUCCESS, m)), errc::no_data);
}

TEST(MergeAddresses, FollowsTheRules) {
    const Addresses v4{make_address("192.0.2.1")}, v6{make_address("2001:db8::1")};
    const error_code nx = errc::nxdomain, nodata = errc::no_data, fail = errc::servfail;
    auto merged = merge_addresses(v4, v6);
    ASSERT_TRUE(merged.has_value());
    EXPECT_EQ(*merged, (Addresses{v4[0], v6[0]}));
    EXPECT_EQ(*merge_addresses(nodata, v6), v6);
    EXPECT_EQ(*merge_addresses(v4, fail), v4);  // addresses beat a failure of the other
    EXPECT_EQ(error_of(merge_addresses(nodata, nodata)), errc::no_data);
    EXPECT_EQ(error_of(merge_addresses(nx, nx)), errc::nxdomain);
    EXPECT_EQ(error_of(merge_addresses(nx, nodata)), errc::nxdomain);
    EXPECT_EQ(error_of(merge_addresses(nodata, fail)), errc::servfail);
    EXPECT_EQ(error_of(merge_addresses(errc::timeout, nx)), errc::timeout);
}

TEST(AresStatus, MapsOntoErrc) {
    EXPECT_FALSE(from_ares_status(ARES_SUCCESS));
    EXPECT_EQ(from_ares_status(ARES_ENOTFOUND), errc::nxdomain);
    EXPECT_EQ(from_ares_status(ARES_ENODATA), errc::no_data);
    EXPECT_EQ(from_ares_status(ARES_ESERVFAIL), errc::servfail);
    EXPECT_EQ(from_ares_status(ARES_ETIMEOUT), errc::timeout);
    EXPECT_EQ(from_ares_status(ARES_EREFUSED), errc::refused);
    EXPECT_EQ(from_ares_status(ARES_ECONNREFUSED), errc::connection_refused);
    EXPECT_EQ(from_ares_status(ARES_EBADRESP), errc::bad_response);
    EXPECT_EQ(from_ares_status(ARES_EFORMERR), errc::bad_response);
    EXPECT_EQ(from_ares_status(ARES_ECANCELLED), errc::cancelled);
    EXPECT_EQ(from_ares_status(ARES_EDESTRUCTION), errc::cancelled);
    EXPECT_EQ(from_ares_status(ARES_ENOMEM), errc::other);
    EXPECT_EQ(from_ares_status(ARES_EBADNAME), errc::other);
}

TEST(Errors, NotFoundMeansAnAnswer) {
    EXPECT_TRUE(is_not_found(errc::nxdomain));
    EXPECT_TRUE(is_not_found(errc::no_data));
    EXPECT_FALSE(is_not_found(errc::servfail));
    EXPECT_FALSE(is_not_found(errc::timeout));
    EXPECT_FALSE(is_not_found(error_code{}));
    EXPECT_FALSE(is_not_found(make_error_code(boost::system::errc::no_such_file_or_directory)));
    EXPECT_EQ(make_error_code(errc::nxdomain).message(), "no such domain");
    EXPECT_STREQ(make_error_code(errc::timeout).category().name(), "posthorn.dns");
}

}  // namespace
}  // namespace posthorn::dns::detail
