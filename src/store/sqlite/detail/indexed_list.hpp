// A page of a list's search answered by the search index (search_index.hpp) and the tail it
// has not indexed yet. Private to store/sqlite.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "store/sqlite/detail/db.hpp"

namespace posthorn::store::sqlite::detail {

// What a list searches in the index.
struct IndexedList {
    const char* docs;       // search.<docs>: rowid, account_no, <id_column>
    const char* buckets;    // search.<buckets>: the documents counted by second, minute, …
    const char* text;       // search.<text>: the FTS5 table
    const char* id_column;  // email_id | inbound_id
    const char* columns;    // the FTS5 column filter, "{subject recipients}"
};
inline constexpr IndexedList kEmailsBySubjectOrRecipient{
    "email_docs", "email_buckets", "email_text", "email_id", "{subject recipients}"};
inline constexpr IndexedList kEnvelopesBySenderSubjectOrId{
    "email_docs", "email_buckets", "email_text", "email_id", "{subject sender envelope}"};
inline constexpr IndexedList kInboundBySenderRecipientOrSubject{
    "inbound_docs", "inbound_buckets", "inbound_text", "inbound_id", "{sender recipient subject}"};

// Whether the index can answer a search for `needle`: three characters or more (a trigram).
bool indexable(std::string_view needle);

struct IndexedQuery {
    std::string account_id;
    std::string needle;                      // case-insensitive substring
    std::optional<std::int64_t> start, end;  // created at or after, at or before
    bool descending = true;
    std::int64_t offset = 0;
    std::int64_t limit = 20;
    bool count = true;  // false: the caller knows the total (IndexedPage::total is then 0)
};

struct IndexedPage {
    std::vector<std::string> ids;  // the page, in the list's order
    std::int64_t total = 0;
};

// A row of the tail: found by a scan, not yet in the index.
using TailRow = std::pair<std::int64_t, std::string>;  // created_at, id

// The page: the index's matches of the account (with an empty needle, every row it holds,
// by the account's index of its documents), merged with `tail` (every matching row the index
// does not hold yet, in the list's order), by creation time; a tail row goes first among rows
// of the same millisecond (it was written last).
Result<IndexedPage> indexed_page(Db& db, const IndexedList& list, const IndexedQuery& q,
                                 const std::vector<TailRow>& tail);

}  // namespace posthorn::store::sqlite::detail
