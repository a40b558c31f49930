// api/email_labels.hpp — an email's tags and metadata as an account gives them, checked once
// for both front doors: POST /v1/emails (`tags`, `metadata`) and SMTP submission (the
// X-Posthorn-Tag and X-Posthorn-Metadata headers), and a tag as a list filter names it
// (GET /v1/email?tag=name:value). docs/sending.md, "Tags and metadata".
//
// A tag is a name and a value, each 1 to 256 of the ASCII letters, digits, '_' and '-'; an
// email has at most 10, each name once. Metadata is a JSON object of at most 2048 bytes as
// serialized (compact, as it is kept and sent in events). Pure; thread-safe.
#pragma once

#include <boost/json/value.hpp>

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "domain/model.hpp"

namespace posthorn::api {

inline constexpr std::size_t kMaxTags = 10;
inline constexpr std::size_t kMaxTagPartBytes = 256;
inline constexpr std::size_t kMaxMetadataBytes = 2048;
inline constexpr std::string_view kTagHeader = "X-Posthorn-Tag";
inline constexpr std::string_view kMetadataHeader = "X-Posthorn-Metadata";

struct EmailLabels {
    std::vector<domain::Tag> tags;
    std::string metadata_json;  // serialized; "" when none was given
};

// What is wrong with `s` as a tag's name or value, said of `what` ("tags[0].name"); nullopt
// when nothing is.
std::optional<std::string> tag_part_error(std::string_view what, std::string_view s);

// The `tags` and `metadata` fields of a send's body (either may be null: absent). Answers the
// message of the first fault, naming the field.
std::optional<std::string> read_json_labels(const boost::json::value* tags,
                                            const boost::json::value* metadata, EmailLabels& out);

// The labels of a submitted message's headers (unfolded, as mail::ParsedMessage has them):
// one X-Posthorn-Tag per tag, "name=value" (spaces around either part ignored), and at most
// one X-Posthorn-Metadata holding the JSON object. Answers the message of the first fault.
std::optional<std::string> read_header_labels(
    const std::vector<std::pair<std::string, std::string>>& headers, EmailLabels& out);

}  // namespace posthorn::api
