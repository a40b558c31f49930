#include "store/sqlite/detail/events.hpp"

#include <cstdio>

namespace posthorn::store::sqlite::detail {

std::string json_string(std::string_view s) {
    std::string out = "\"";
    for (unsigned char c : s) {
        switch (c) {
            case '"':
                out += "\\\"";
                break;
            case '\\':
                out += "\\\\";
                break;
            case '\n':
                out += "\\n";
                break;
            case '\r':
                out += "\\r";
                break;
            case '\t':
                out += "\\t";
                break;
            default:
                if (c < 0x20) {
                    char buf[8];
                    std::snprintf(buf, sizeof buf, "\\u%04x", c);
                    out += buf;
                } else {
                    out.push_back(static_cast<char>(c));
                }
        }
    }
    return out + "\"";
}

Result<void> insert_event(Db& db, const Event& e) {
    auto s = db.prepare(
        "INSERT INTO events (id, account_id, type, email_id, data, created_at) "
        "VALUES (?1, ?2, ?3, ?4, ?5, ?6)");
    if (!s) return s.error();
    return s->bind(1, e.id)
        .bind(2, e.account_id)
        .bind(3, e.type)
        .bind(4, e.email_id)
        .bind(5, e.data_json)
        .bind(6, e.created_at)
        .run();
}

}  // namespace posthorn::store::sqlite::detail
