#include "store/copy.hpp"

namespace posthorn::store {

const std::vector<CopyTable>& copy_tables() {
    using K = CopyKind;
    // The columns of src/store/migrations/pg/001_schema.sql that hold what was written; the
    // leases (lease_owner, lease_until) are left out, so they start empty.
    static const std::vector<CopyTable> kTables = {
        {"accounts", {{"id", K::text}, {"name", K::text}, {"created_at", K::integer}}},
        {"api_keys",
         {{"id", K::text},
          {"account_id", K::text},
          {"prefix", K::text},
          {"hash", K::text},
          {"created_at", K::integer},
          {"revoked_at", K::integer},
          {"name", K::text},
          {"permission", K::text},
          {"domain_id", K::text},
          {"test", K::boolean}}},
        {"domains",
         {{"id", K::text},
          {"account_id", K::text},
          {"name", K::text},
          {"status", K::text},
          {"token", K::text},
          {"sending", K::boolean},
          {"inbound", K::boolean},
          {"open_tracking", K::boolean},
          {"click_tracking", K::boolean},
          {"records", K::text},
          {"first_verify_at", K::integer},
          {"last_checked_at", K::integer},
          {"next_check_at", K::integer},
          {"verified_at", K::integer},
          {"created_at", K::integer},
          {"updated_at", K::integer},
          {"dkim_selector", K::text},
          {"dkim_pending", K::text},
          {"dkim_rotated_at", K::integer},
          {"tracking_label", K::text},
          {"return_path_label", K::text},  // the custom return path (migrations 024 / 011)
          {"return_path_verified", K::boolean}}},
        {"dkim_keys",
         {{"id", K::text},
          {"domain_id", K::text},
          {"selector", K::text},
          {"private_key", K::bytes},
          {"public_key", K::text},
          {"active", K::boolean},
          {"created_at", K::integer}}},
        {"emails",
         {{"id", K::text},
          {"account_id", K::text},
          {"domain_id", K::text},
          {"envelope_id", K::text},
          {"status", K::text},
          {"from_email", K::text},
          {"from_name", K::text},
          {"to_display", K::text},
          {"subject", K::text},
          {"message_id", K::text},
          {"return_token", K::text},
          {"recipient_addresses", K::text},  // every recipient's address, one a line
          {"track_opens", K::boolean},
          {"track_clicks", K::boolean},
          {"source", K::text},
          {"size_bytes", K::integer},
          {"total_recipients", K::integer},
          {"created_at", K::integer},
          {"queued_at", K::integer},
          {"sent_at", K::integer},
          {"delivered_at", K::integer},
          {"failed_at", K::integer},
          {"opened_at", K::integer},
          {"clicked_at", K::integer},
          {"updated_at", K::integer},
          {"raw", K::bytes},               // the message as built
          {"api_key_id", K::text},         // the key that sent it (NULL: not known)
          {"tags", K::text},               // one "name=value" a line (store/detail/tag_codec.hpp)
          {"metadata", K::text},           // the JSON object given (migrations 020 / 007)
          {"test", K::boolean},            // sent with a test key (migrations 022 / 009)
          {"return_path", K::text},        // its envelope sender's domain (migrations 024 / 011)
          {"scheduled_at", K::integer}}},  // the time it was asked for (migrations 027 / 014)
        {"email_tags",                     // one row per tag of an email: what a tag filter reads
         {{"account_id", K::text}, {"name", K::text}, {"value", K::text}, {"email_id", K::text}}},
        {"recipients",
         {{"id", K::integer},  // the order of an email's recipients
          {"email_id", K::text},
          {"account_id", K::text},
          {"address", K::text},
          {"domain", K::text},
          {"type", K::text},
          {"status", K::text},
          {"attempts", K::integer},
          {"next_attempt_at", K::integer},  // set on every open recipient
          {"last_response", K::text},
          {"sent_at", K::integer},
          {"final_at", K::integer},
          {"bounce_type", K::text},
          {"bounce_code", K::text},
          {"bounce_message", K::text},
          {"updated_at", K::integer},
          {"tls_policy", K::text},  // the last attempt's TLS (migrations 016 / 003)
          {"tls_version", K::text},
          {"tls_verified", K::boolean},
          {"tls_failure", K::text},
          {"held_at", K::integer}}},  // held by the operator (migrations 017 / 004)
        {"suppressions",
         {{"account_id", K::text},
          {"address", K::text},
          {"reason", K::text},
          {"source_email_id", K::text},
          {"created_at", K::integer}}},
        {"idempotency_keys",
         {{"account_id", K::text},
          {"key", K::text},
          {"email_id", K::text},
          {"response_status", K::integer},
          {"response_body", K::text},
          {"created_at", K::integer},
          {"expires_at", K::integer}}},
        {"events",
         {{"seq", K::integer},  // the order they were written in
          {"id", K::text},
          {"account_id", K::text},
          {"type", K::text},
          {"email_id", K::text},
          {"data", K::text},
          {"created_at", K::integer},
          {"routed", K::boolean}}},  // its webhook deliveries are written
        {"webhooks",
         {{"id", K::text},
          {"account_id", K::text},
          {"url", K::text},
          {"events", K::names},
          {"active", K::boolean},
          {"secret", K::bytes},
          {"created_at", K::integer},
          {"updated_at", K::integer},
          {"previous_secret", K::bytes},  // of a rotation (migrations 021 / 008)
          {"previous_secret_until", K::integer}}},
        {"webhook_deliveries",
         {{"id", K::integer},
          {"webhook_id", K::text},
          {"event_id", K::text},
          {"state", K::text},
          {"attempts", K::integer},
          {"next_attempt_at", K::integer},
          {"created_at", K::integer}}},
        {"webhook_attempts",
         {{"id", K::integer},
          {"delivery_id", K::integer},
          {"attempt", K::integer},
          {"status_code", K::integer},
          {"error", K::text},
          {"duration_ms", K::integer},
          {"created_at", K::integer}}},
        {"request_logs",
         {{"account_id", K::text},
          {"created_at", K::integer},
          {"id", K::text},
          {"method", K::text},
          {"url", K::text},
          {"status", K::integer},
          {"duration_ms", K::integer},
          {"ip", K::text},
          {"user_agent", K::text},
          {"session", K::boolean}}},
        {"inbound_emails",
         {{"id", K::text},
          {"account_id", K::text},
          {"domain_id", K::text},
          {"from_email", K::text},
          {"from_name", K::text},
          {"to_address", K::text},
          {"subject", K::text},
          {"reply_to", K::text},
          {"cc", K::text},
          {"bcc", K::text},
          {"raw", K::bytes},
          {"received_at", K::integer},
          {"authentication", K::text}}},
        {"inbound_attachments",
         {{"inbound_id", K::text},
          {"idx", K::integer},
          {"filename", K::text},
          {"content_type", K::text},
          {"size", K::integer},
          {"content_id", K::text}}},
        {"templates",  // stored templates (migrations 026 / 013)
         {{"id", K::text},
          {"account_id", K::text},
          {"name", K::text},
          {"subject", K::text},
          {"html", K::text},
          {"text", K::text},
          {"variables", K::text},
          {"created_at", K::integer},
          {"updated_at", K::integer}}},
        {"stat_counters",  // the statistics' counters (migrations 028 / 016)
         {{"account_id", K::text},
          {"dimension", K::text},
          {"hour", K::integer},
          {"kind", K::text},
          {"count", K::integer}}},
    };
    return kTables;
}

namespace {

Result<CopyReport> refusal(CopyTarget& to, const std::vector<CopyTable>& tables) {
    CopyReport report{.outcome = CopyReport::Outcome::target_not_empty};
    for (const auto& t : tables) {
        auto has = to.has_rows(t);
        if (!has) return has.error();
        if (!*has) continue;
        auto n = to.count(t);
        if (!n) return n.error();
        report.tables.push_back({.table = std::string(t.name), .target = *n});
    }
    return report;
}

Result<void> copy_rows(CopySource& from, CopyTarget& to, const std::vector<CopyTable>& tables,
                       const CopyProgress& progress) {
    for (const auto& t : tables) {
        auto sink = to.start_table(t);
        if (!sink) return sink.error();
        if (auto r = from.read(t, **sink); !r) return r;
        auto rows = to.finish_table();
        if (!rows) return rows.error();
        if (progress) progress(t.name, *rows);
    }
    return {};
}

}  // namespace

Result<CopyReport> copy_store(CopySource& from, CopyTarget& to, const CopyProgress& progress) {
    const auto& tables = copy_tables();
    if (auto r = to.begin(tables); !r) return r.error();
    // From here on every way out that does not commit rolls back.
    auto report = refusal(to, tables);
    if (!report || !report->tables.empty()) {
        to.rollback();
        return report;
    }
    report->outcome = CopyReport::Outcome::copied;
    if (auto r = copy_rows(from, to, tables, progress); !r) {
        to.rollback();
        return r.error();
    }
    // Counted again on both sides, in the target's transaction: what commit() would keep.
    for (const auto& t : tables) {
        auto source = from.count(t);
        auto target = source ? to.count(t) : Result<std::int64_t>(source.error());
        if (!target) {
            to.rollback();
            return target.error();
        }
        report->tables.push_back(
            {.table = std::string(t.name), .source = *source, .target = *target});
        if (*source != *target) report->outcome = CopyReport::Outcome::counts_differ;
    }
    if (report->outcome == CopyReport::Outcome::counts_differ) {
        to.rollback();
        return report;
    }
    if (auto r = to.commit(); !r) return r.error();
    return report;
}

}  // namespace posthorn::store
