#include "dns/detail/wire.hpp"

#include <gtest/gtest.h>

#include <random>

#include "dns/testing/message_builder.hpp"

namespace posthorn::dns::detail {
namespace {

using testing::Bytes;
using testing::encode_name;
using testing::MessageBuilder;

Bytes cname_message(std::string_view owner, std::string_view target) {
    return MessageBuilder{}
        .question(owner, kTypeCname)
        .answer(owner, kTypeCname, encode_name(target))
        .build();
}

error_code error_of(const Bytes& m, std::string_view qname = "alias.example.test") {
    auto r = parse_cname_answer(m, qname);
    return r ? error_code{} : r.error();
}

TEST(WireCname, ReadsTheTarget) {
    auto r = parse_cname_answer(cname_message("alias.example.test", "target.example.test"),
                                "alias.example.test");
    ASSERT_TRUE(r.has_value()) << r.error().message();
    EXPECT_EQ(*r, std::vector<std::string>{"target.example.test"});
}

TEST(WireCname, ComparesOwnersCaseInsensitivelyAndAnswersLowerCase) {
    auto m = cname_message("ALIAS.Example.TEST", "Target.EXAMPLE.test");
    auto r = parse_cname_answer(m, "alias.example.TEST.");
    ASSERT_TRUE(r.has_value()) << r.error().message();
    EXPECT_EQ(*r, std::vector<std::string>{"target.example.test"});
}

TEST(WireCname, FollowsCompressionPointers) {
    // Question name at offset 12: 5 alias 7 example 4 test 0; "example.test" starts at 18.
    Bytes rr = {0xC0, 0x0C, 0x00, 0x05, 0x00, 0x01, 0, 0, 0x0E, 0x10};
    const Bytes rdata = {6, 't', 'a', 'r', 'g', 'e', 't', 0xC0, 18};
    testing::put16(rr, static_cast<std::uint16_t>(rdata.size()));
    rr.insert(rr.end(), rdata.begin(), rdata.end());
    auto m = MessageBuilder{}.question("alias.example.test", kTypeCname).raw(rr, 1).build();
    auto r = parse_cname_answer(m, "alias.example.test");
    ASSERT_TRUE(r.has_value()) << r.error().message();
    EXPECT_EQ(*r, std::vector<std::string>{"target.example.test"});
}

TEST(WireCname, IgnoresOtherOwnersTypesAndClasses) {
    auto m = MessageBuilder{}
                 .question("alias.example.test", kTypeCname)
                 .answer("other.example.test", kTypeCname, encode_name("x.example.test"))
                 .answer("alias.example.test", kTypeA, Bytes{192, 0, 2, 1})
                 .answer("alias.example.test", kTypeCname, encode_name("y.example.test"), 3)
                 .build();
    EXPECT_EQ(error_of(m), errc::no_data);
}

TEST(WireCname, ReturnsEveryMatchingRecord) {
    auto m = MessageBuilder{}
                 .question("alias.example.test", kTypeCname)
                 .answer("alias.example.test", kTypeCname, encode_name("a.example.test"))
                 .answer("alias.example.test", kTypeCname, encode_name("b.example.test"))
                 .build();
    auto r = parse_cname_answer(m, "alias.example.test");
    ASSERT_TRUE(r.has_value());
    EXPECT_EQ(*r, (std::vector<std::string>{"a.example.test", "b.example.test"}));
}

TEST(WireCname, MapsRcodes) {
    auto with_rcode = [](int rcode) {
        return MessageBuilder{}.rcode(rcode).question("alias.example.test", kTypeCname).build();
    };
    EXPECT_EQ(error_of(with_rcode(0)), errc::no_data);
    EXPECT_EQ(error_of(with_rcode(1)), errc::bad_response);
    EXPECT_EQ(error_of(with_rcode(2)), errc::servfail);
    EXPECT_EQ(error_of(with_rcode(3)), errc::nxdomain);
    EXPECT_EQ(error_of(with_rcode(4)), errc::other);
    EXPECT_EQ(error_of(with_rcode(5)), errc::refused);
}

TEST(WireCname, RefusesAQuery) {
    auto m = MessageBuilder{}
                 .flags(0x0100)  // QR clear
                 .question("alias.example.test", kTypeCname)
                 .answer("alias.example.test", kTypeCname, encode_name("t.example.test"))
                 .build();
    EXPECT_EQ(error_of(m), errc::bad_response);
}

TEST(WireCname, TheRootIsTheEmptyName) {
    auto r = parse_cname_answer(cname_message("alias.example.test", "."), "alias.example.test");
    ASSERT_TRUE(r.has_value());
    EXPECT_EQ(*r, std::vector<std::string>{""});
}

TEST(WireCname, TargetMustFillRdataExactly) {
    Bytes longer = encode_name("t.example.test");
    longer.push_back(0);  // one octet of RDATA after the name
    auto m = MessageBuilder{}
                 .question("alias.example.test", kTypeCname)
                 .answer("alias.example.test", kTypeCname, longer)
                 .build();
    EXPECT_EQ(error_of(m), errc::bad_response);

    // RDLENGTH 3, but the name runs on into the next record.
    Bytes rr = encode_name("alias.example.test");
    const Bytes tail = {0x00, 0x05, 0x00, 0x01, 0, 0, 0, 60, 0x00, 0x03, 1, 'x', 1, 'y', 0};
    rr.insert(rr.end(), tail.begin(), tail.end());
    m = MessageBuilder{}.question("alias.example.test", kTypeCname).raw(rr, 1).build();
    EXPECT_EQ(error_of(m), errc::bad_response);
}

TEST(WireMessage, EveryTruncationFails) {
    const Bytes full = cname_message("alias.example.test", "target.example.test");
    ASSERT_TRUE(parse_message(full).has_value());
    for (std::size_t n = 0; n < full.size(); ++n) {
        const Bytes cut(full.begin(), full.begin() + static_cast<std::ptrdiff_t>(n));
        EXPECT_FALSE(parse_message(cut).has_value()) << "prefix of " << n << " octets";
        EXPECT_EQ(error_of(cut), errc::bad_response) << "prefix of " << n << " octets";
    }
}

TEST(WireMessage, ACountTheMessageCannotHoldFailsQuickly) {
    auto m = MessageBuilder{}
                 .question("alias.example.test", kTypeCname)
                 .answer("alias.example.test", kTypeCname, encode_name("t.example.test"))
                 .ancount(65535)
                 .build();
    EXPECT_EQ(error_of(m), errc::bad_response);
}

TEST(WireMessage, RdataPastTheEndFails) {
    Bytes rr = encode_name("alias.example.test");
    const Bytes tail = {0x00, 0x05, 0x00, 0x01, 0, 0, 0, 60, 0x01, 0x00, 1, 'x', 0};
    rr.insert(rr.end(), tail.begin(), tail.end());
    auto m = MessageBuilder{}.question("alias.example.test", kTypeCname).raw(rr, 1).build();
    EXPECT_EQ(error_of(m), errc::bad_response);
}

// Names, read at offset 12 of a message whose header is all zeros.
Result<std::string> name_at_12(const Bytes& name_octets, std::size_t* end = nullptr) {
    Bytes m(kHeaderSize, 0);
    m.insert(m.end(), name_octets.begin(), name_octets.end());
    std::size_t at = kHeaderSize;
    auto r = read_name(m, at);
    if (end) *end = at;
    return r;
}

TEST(WireName, PointerToItselfFails) { EXPECT_FALSE(name_at_12({0xC0, 0x0C}).has_value()); }

TEST(WireName, PointerForwardFails) {
    EXPECT_FALSE(name_at_12({0xC0, 0x0E, 1, 'a', 0}).has_value());
}

TEST(WireName, PointerPastTheEndFails) {
    EXPECT_FALSE(name_at_12({1, 'a', 0xFF, 0xFF}).has_value());
}

TEST(WireName, PointerIntoTheHeaderFails) {
    EXPECT_FALSE(name_at_12({1, 'a', 0xC0, 0x02}).has_value());
}

TEST(WireName, TruncatedPointerFails) { EXPECT_FALSE(name_at_12({1, 'a', 0xC0}).has_value()); }

TEST(WireName, LoopThroughALabelFails) {
    // 12: 1 'a'; 14: pointer to 12 -> 'a', pointer to 12, ... backwards each time, for ever.
    EXPECT_FALSE(name_at_12({1, 'a', 0xC0, 0x0C}).has_value());
}

TEST(WireName, PointerHiddenInALabelLoopFails) {
    // 12: 3 'x' 0xC0 0x0C; 16: pointer to 14, which reads as a pointer to 12, whose label
    // jumps over 14 back to 16: backwards at every step, and still a loop.
    Bytes m(kHeaderSize, 0);
    const Bytes tail = {3, 'x', 0xC0, 0x0C, 0xC0, 0x0E};
    m.insert(m.end(), tail.begin(), tail.end());
    std::size_t at = 16;
    EXPECT_FALSE(read_name(m, at).has_value());
}

TEST(WireName, LabelOver63Fails) {
    Bytes name;
    name.push_back(64);
    name.insert(name.end(), 64, 'a');
    name.push_back(0);
    EXPECT_FALSE(name_at_12(name).has_value());
    EXPECT_FALSE(name_at_12({0x80, 0x00}).has_value());  // 10: reserved label type
}

TEST(WireName, LabelOf63Succeeds) {
    Bytes name;
    name.push_back(63);
    name.insert(name.end(), 63, 'a');
    name.push_back(0);
    auto r = name_at_12(name);
    ASSERT_TRUE(r.has_value());
    EXPECT_EQ(*r, std::string(63, 'a'));
}

TEST(WireName, NameOf255OctetsSucceedsAnd256Fails) {
    auto name_of = [](std::size_t last_label) {
        Bytes name;
        for (int i = 0; i < 3; ++i) {
            name.push_back(63);
            name.insert(name.end(), 63, 'a');
        }
        name.push_back(static_cast<std::uint8_t>(last_label));
        name.insert(name.end(), last_label, 'b');
        name.push_back(0);
        return name;
    };
    EXPECT_EQ(name_of(61).size(), 255u);
    EXPECT_TRUE(name_at_12(name_of(61)).has_value());
    EXPECT_FALSE(name_at_12(name_of(62)).has_value());
}

TEST(WireName, LengthLimitCountsCompressedParts) {
    // A name of two 63-octet labels at 12 (129 octets), then one of two more labels and a
    // pointer to the first: 64 + 64 + 129 = 257 octets.
    Bytes m(kHeaderSize, 0);
    for (int i = 0; i < 2; ++i) {
        m.push_back(63);
        m.insert(m.end(), 63, 'a');
    }
    m.push_back(0);
    const std::size_t second = m.size();
    m.push_back(63);
    m.insert(m.end(), 63, 'b');
    m.push_back(63);
    m.insert(m.end(), 63, 'c');
    m.push_back(0xC0);
    m.push_back(0x0C);
    std::size_t at = second;
    EXPECT_FALSE(read_name(m, at).has_value());
}

TEST(WireName, OffsetEndsAfterTheFirstPointer) {
    std::size_t end = 0;
    auto r = name_at_12({1, 'a', 0, 1, 'b', 0xC0, 0x0C, 0x99}, &end);
    ASSERT_TRUE(r.has_value());
    EXPECT_EQ(*r, "a");
    EXPECT_EQ(end, 15u);
    Bytes m(kHeaderSize, 0);
    const Bytes tail = {1, 'a', 0, 1, 'b', 0xC0, 0x0C, 0x99};
    m.insert(m.end(), tail.begin(), tail.end());
    std::size_t at = 15;
    auto b = read_name(m, at);
    ASSERT_TRUE(b.has_value());
    EXPECT_EQ(*b, "b.a");
    EXPECT_EQ(at, 19u);
}

TEST(WireName, EscapesDotsBackslashesAndUnprintables) {
    auto r = name_at_12({5, 'a', '.', 'b', ' ', '\\', 2, 'X', 0xFF, 0});
    ASSERT_TRUE(r.has_value());
    EXPECT_EQ(*r, "a\\.b\\032\\\\.x\\255");
}

// Not a fuzzer, but a cheap guard in every test run: random corruptions of a valid message
// must fail or succeed, never read out of bounds (run under ASan to see the difference).
TEST(WireMessage, SurvivesRandomCorruption) {
    Bytes rr = {0xC0, 0x0C, 0x00, 0x05, 0x00, 0x01, 0,   0,   0x0E, 0x10, 0x00,
                0x09, 6,    't',  'a',  'r',  'g',  'e', 't', 0xC0, 18};
    const Bytes base =
        MessageBuilder{}.question("alias.example.test", kTypeCname).raw(rr, 1).build();
    std::mt19937 rng{12345};
    for (int i = 0; i < 20000; ++i) {
        Bytes m = base;
        const int edits = 1 + static_cast<int>(rng() % 4);
        for (int e = 0; e < edits; ++e) {
            const std::size_t at = rng() % m.size();
            switch (rng() % 3) {
                case 0:
                    m[at] = static_cast<std::uint8_t>(rng());
                    break;
                case 1:
                    m.resize(at);
                    break;
                default:
                    m.insert(m.begin() + static_cast<std::ptrdiff_t>(at),
                             static_cast<std::uint8_t>(rng()));
            }
            if (m.empty()) m.push_back(0);
        }
        (void)parse_cname_answer(m, "alias.example.test");
    }
}

}  // namespace
}  // namespace posthorn::dns::detail

namespace posthorn::dns::detail {
namespace {

TEST(WireTlsa, ReadsRecordsAndTheAdBit) {
    const testing::Bytes rdata = {3, 1, 1, 0xAB, 0xCD};
    auto m = testing::MessageBuilder{}
                 .flags(0x8000 | 0x0100 | 0x0080 | 0x0020)  // QR RD RA AD
                 .question("_25._tcp.mx.example.test", kTypeTlsa)
                 .answer("_25._tcp.mx.example.test", kTypeTlsa, rdata)
                 .answer("_25._tcp.mx.example.test", kTypeA, testing::Bytes{192, 0, 2, 1})
                 .build();
    auto r = parse_tlsa_answer(m);
    ASSERT_TRUE(r.has_value()) << r.error().message();
    EXPECT_TRUE(r->authenticated);
    ASSERT_EQ(r->records.size(), 1u);
    EXPECT_EQ(r->records[0],
              (TlsaRecord{.usage = 3, .selector = 1, .matching_type = 1, .data = {0xAB, 0xCD}}));
}

TEST(WireTlsa, WithoutAdIsNotAuthenticated) {
    auto m = testing::MessageBuilder{}
                 .flags(0x8000 | 0x0100 | 0x0080)
                 .question("_25._tcp.mx.example.test", kTypeTlsa)
                 .answer("_25._tcp.mx.example.test", kTypeTlsa, testing::Bytes{2, 0, 1, 0x01})
                 .build();
    auto r = parse_tlsa_answer(m);
    ASSERT_TRUE(r.has_value()) << r.error().message();
    EXPECT_FALSE(r->authenticated);
}

TEST(WireTlsa, MapsRcodesAndEmptyAnswers) {
    auto with_rcode = [](int rcode) {
        return testing::MessageBuilder{}
            .flags(0x8000)
            .rcode(rcode)
            .question("_25._tcp.mx.example.test", kTypeTlsa)
            .build();
    };
    EXPECT_EQ(parse_tlsa_answer(with_rcode(0)).error(), errc::no_data);
    EXPECT_EQ(parse_tlsa_answer(with_rcode(2)).error(), errc::servfail);
    EXPECT_EQ(parse_tlsa_answer(with_rcode(3)).error(), errc::nxdomain);
    EXPECT_EQ(parse_tlsa_answer(with_rcode(5)).error(), errc::refused);
}

TEST(WireTlsa, RefusesAShortRecord) {
    auto m = testing::MessageBuilder{}
                 .flags(0x8000)
                 .question("_25._tcp.mx.example.test", kTypeTlsa)
                 .answer("_25._tcp.mx.example.test", kTypeTlsa, testing::Bytes{3, 1, 1})
                 .build();
    EXPECT_EQ(parse_tlsa_answer(m).error(), errc::bad_response);
}

}  // namespace
}  // namespace posthorn::dns::detail
