#include "api/email_labels.hpp"

#include <gtest/gtest.h>

namespace posthorn::api {
namespace {

using Headers = std::vector<std::pair<std::string, std::string>>;

// The message of the refusal of `headers`, or "" when they are taken (into `*out`).
std::string refusal(const Headers& headers, EmailLabels* out = nullptr) {
    EmailLabels labels;
    auto e = read_header_labels(headers, labels);
    if (out) *out = labels;
    return e.value_or("");
}

TEST(HeaderLabels, OneTagAHeaderAndOneMetadataObject) {
    EmailLabels l;
    EXPECT_EQ(refusal({{"Subject", "x"},
                       {"X-Posthorn-Tag", " campaign = spring-24 "},
                       {"x-posthorn-tag", "tier=gold"},
                       {"X-Posthorn-Metadata", R"( {"order": {"id": 42}} )"}},
                      &l),
              "");
    ASSERT_EQ(l.tags.size(), 2u);
    EXPECT_EQ(l.tags[0], (domain::Tag{.name = "campaign", .value = "spring-24"}));
    EXPECT_EQ(l.tags[1], (domain::Tag{.name = "tier", .value = "gold"}));
    EXPECT_EQ(l.metadata_json, R"({"order":{"id":42}})");

    EXPECT_EQ(refusal({{"Subject", "no labels"}}, &l), "");
    EXPECT_TRUE(l.tags.empty());
    EXPECT_EQ(l.metadata_json, "");
}

TEST(HeaderLabels, EveryFaultIsNamed) {
    const std::string part = " must be 1 to 256 ASCII letters, digits, '_' or '-'";
    EXPECT_EQ(refusal({{"X-Posthorn-Tag", "campaign"}}),
              "X-Posthorn-Tag must be name=value (one tag a header)");
    EXPECT_EQ(refusal({{"X-Posthorn-Tag", "a=b, c=d"}}), "X-Posthorn-Tag value" + part);
    EXPECT_EQ(refusal({{"X-Posthorn-Tag", "=b"}}), "X-Posthorn-Tag name" + part);
    EXPECT_EQ(refusal({{"X-Posthorn-Tag", "a=b"}, {"X-Posthorn-Tag", "a=c"}}),
              "X-Posthorn-Tag headers: the tag name 'a' is given twice (a name may appear once)");
    Headers eleven;
    for (int i = 0; i < 11; ++i)
        eleven.emplace_back("X-Posthorn-Tag", "t" + std::to_string(i) + "=v");
    EXPECT_EQ(refusal(eleven), "X-Posthorn-Tag headers holds 11 tags; an email takes at most 10");
    EXPECT_EQ(refusal({{"X-Posthorn-Metadata", "[1]"}}),
              "X-Posthorn-Metadata must be a JSON object");
    EXPECT_EQ(refusal({{"X-Posthorn-Metadata", "{nope"}})
                  .rfind("X-Posthorn-Metadata is not valid JSON", 0),
              0u);
    EXPECT_EQ(refusal({{"X-Posthorn-Metadata", "{}"}, {"X-Posthorn-Metadata", "{}"}}),
              "X-Posthorn-Metadata is given more than once");
    EXPECT_EQ(refusal({{"X-Posthorn-Metadata", R"({"k":")" + std::string(2041, 'x') + "\"}"}}),
              "X-Posthorn-Metadata is 2049 bytes as serialized JSON; the limit is 2048");
}

}  // namespace
}  // namespace posthorn::api
