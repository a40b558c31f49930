// The contract of InboundStore's mail: received messages, one row per receiving account
// and recipient, with their attachments and raw bytes, listed with search, sort and pages.
#include "store/contract/contract.hpp"

namespace posthorn::store::contract {
namespace {

InboundEmail inbound(const Domain& d, UnixMs at, const std::string& from,
                     const std::string& subject, const std::string& to = "in@in.example.com") {
    return InboundEmail{.id = id_at("in_", at),
                        .account_id = d.account_id,
                        .domain_id = d.id,
                        .from_email = from,
                        .from_name = "Name of " + from,
                        .to_address = to,
                        .subject = subject,
                        .raw = "Subject: " + subject + "\r\n\r\nhi\r\n",
                        .received_at = at};
}

TEST_P(StoreContract, InboundMailReadsBackWhole) {
    const auto a = make_account("a");
    const auto b = make_account("b");
    const auto da = make_domain(a, "in.example.com");
    const auto db = make_domain(b, "in.example.com");
    auto m = inbound(da, kT0 + 5, "x@example.org", "Report");
    m.reply_to = "replies@example.org";
    m.cc_json = R"(["c@example.org"])";
    m.bcc_json = R"(["in@in.example.com"])";
    m.authentication_json = R"({"spf":{"result":"pass"},"dkim":[],"dmarc":{"result":"none"}})";
    m.raw = "Subject: Report\r\nContent-Type: text/plain; charset=latin1\r\n\r\nd\xe9j\xe0 vu\r\n";
    m.attachments = {{.index = 0,
                      .filename = "report.pdf",
                      .content_type = "application/pdf",
                      .size = 1234,
                      .content_id = ""},
                     {.index = 1,
                      .filename = "",
                      .content_type = "image/png",
                      .size = 99,
                      .content_id = "logo@x"}};
    auto copy = m;  // the same message, received for account B too
    copy.id = id_at("in_", kT0 + 5);
    copy.account_id = b.id;
    copy.domain_id = db.id;
    copy.attachments.clear();
    copy.reply_to = "";
    copy.cc_json = "null";
    copy.bcc_json = "null";
    copy.authentication_json = "null";
    copy.from_name = "";
    const auto ev = domain::make_event(
        domain::EventKind::inbound_received, a.id, std::nullopt,
        domain::inbound_event_data({.id = m.id, .from_email = m.from_email}), kT0 + 5);
    ASSERT_TRUE(run(store().create_inbound({m, copy}, {ev})));

    auto got = run(store().find_inbound(a.id, m.id));
    ASSERT_TRUE(got) << got.error().message();
    EXPECT_EQ(got->id, m.id);
    EXPECT_EQ(got->account_id, a.id);
    EXPECT_EQ(got->domain_id, da.id);
    EXPECT_EQ(got->from_email, "x@example.org");
    EXPECT_EQ(got->from_name, "Name of x@example.org");
    EXPECT_EQ(got->to_address, "in@in.example.com");
    EXPECT_EQ(got->subject, "Report");
    EXPECT_EQ(got->reply_to, "replies@example.org");
    EXPECT_EQ(got->cc_json, R"(["c@example.org"])");
    EXPECT_EQ(got->bcc_json, R"(["in@in.example.com"])");
    EXPECT_EQ(got->authentication_json, m.authentication_json);
    EXPECT_EQ(got->raw, m.raw) << "byte for byte";
    EXPECT_EQ(got->received_at, kT0 + 5);
    ASSERT_EQ(got->attachments.size(), 2u);
    EXPECT_EQ(got->attachments[0].index, 0);
    EXPECT_EQ(got->attachments[0].filename, "report.pdf");
    EXPECT_EQ(got->attachments[0].content_type, "application/pdf");
    EXPECT_EQ(got->attachments[0].size, 1234);
    EXPECT_EQ(got->attachments[0].content_id, "");
    EXPECT_EQ(got->attachments[1].filename, "");
    EXPECT_EQ(got->attachments[1].content_id, "logo@x");

    auto theirs = run(store().find_inbound(b.id, copy.id));
    ASSERT_TRUE(theirs) << theirs.error().message();
    EXPECT_EQ(theirs->reply_to, "");
    EXPECT_EQ(theirs->cc_json, "null");
    EXPECT_EQ(theirs->bcc_json, "null");
    EXPECT_EQ(theirs->authentication_json, "null") << "none kept";
    EXPECT_EQ(theirs->from_name, "");
    EXPECT_TRUE(theirs->attachments.empty());
    EXPECT_EQ(theirs->raw, m.raw);

    EXPECT_EQ(run(store().find_inbound(b.id, m.id)).error(), errc::not_found);
    EXPECT_EQ(run(store().find_inbound(a.id, copy.id)).error(), errc::not_found);
    EXPECT_EQ(run(store().find_inbound(a.id, id_at("in_", kT0))).error(), errc::not_found);

    auto listed = run(store().list_inbound({.account_id = a.id}));
    ASSERT_TRUE(listed) << listed.error().message();
    ASSERT_EQ(listed->items.size(), 1u);
    EXPECT_EQ(listed->items[0].id, m.id);
    EXPECT_EQ(listed->items[0].attachments.size(), 2u) << "with their attachments";
    EXPECT_EQ(listed->items[0].raw, "") << "the message only from find_inbound";
    EXPECT_EQ(listed->items[0].authentication_json, m.authentication_json) << "listed too";
    auto events = route_all();
    ASSERT_EQ(events.size(), 1u);
    EXPECT_EQ(events[0].id, ev.id);
}

TEST_P(StoreContract, InboundMailIsSearchedSortedAndPaged) {
    const auto a = make_account("a");
    const auto b = make_account("b");
    const auto da = make_domain(a, "in.example.com");
    const std::vector<InboundEmail> mail = {
        inbound(da, kT0, "zoe@example.org", "Order #1"),
        inbound(da, kT0 + 10, "adam@example.org", "re: 50% off_now"),
        inbound(da, kT0 + 20, "Bea@example.org", "Order #2", "sales@in.example.com"),
        inbound(da, kT0 + 20, "carl@example.org", "hello"),
        inbound(da, kT0 + 30, "dan@example.org", "50 off now"),
    };
    auto theirs = inbound(make_domain(b, "in.example.com"), kT0 + 15, "zoe@example.org",
                          "Order 50% off_now hello");
    ASSERT_TRUE(run(store().create_inbound(mail, {})));
    ASSERT_TRUE(run(store().create_inbound({theirs}, {})));
    auto list = [&](SearchQuery q, std::int64_t* total = nullptr) {
        q.account_id = a.id;
        auto page = run(store().list_inbound(q));
        EXPECT_TRUE(page) << page.error().message();
        std::vector<int> out;
        if (!page) return out;
        if (total) *total = page->total;
        for (const auto& m : page->items) {
            int found = -1;
            for (std::size_t i = 0; i < mail.size(); ++i)
                if (mail[i].id == m.id) found = static_cast<int>(i);
            out.push_back(found);
        }
        return out;
    };
    using V = std::vector<int>;
    std::int64_t total = 0;
    EXPECT_EQ(list({.sort_by = "received_at"}, &total), (V{4, 3, 2, 1, 0})) << "ties by id";
    EXPECT_EQ(total, 5);
    EXPECT_EQ(list({.sort_by = "received_at", .order = SortOrder::asc}), (V{0, 1, 2, 3, 4}));
    EXPECT_EQ(list({.page = 2, .limit = 2, .sort_by = "received_at"}, &total), (V{2, 1}));
    EXPECT_EQ(total, 5);
    EXPECT_EQ(list({.page = 4, .limit = 2, .sort_by = "received_at"}, &total), V{});
    EXPECT_EQ(total, 5);
    EXPECT_EQ(list({.sort_by = "subject", .order = SortOrder::asc}), (V{4, 0, 2, 3, 1}))
        << "bytes: \"50\" < \"Order\" < \"hello\" < \"re\"";
    EXPECT_EQ(list({.sort_by = "from_email", .order = SortOrder::asc}), (V{2, 1, 3, 4, 0}))
        << "bytes: \"Bea\" first";
    EXPECT_EQ(list({.sort_by = "from_email"}), (V{0, 4, 3, 1, 2}));

    EXPECT_EQ(list({.search = "ORDER"}, &total), (V{2, 0})) << "subject, any case";
    EXPECT_EQ(total, 2);
    EXPECT_EQ(list({.search = "bea@"}), (V{2})) << "sender";
    EXPECT_EQ(list({.search = "name of adam"}), (V{1})) << "sender's name";
    EXPECT_EQ(list({.search = "SALES@"}), (V{2})) << "recipient";
    EXPECT_EQ(list({.search = "0% off"}), (V{1})) << "% is a character";
    EXPECT_EQ(list({.search = "f_n"}), (V{1})) << "_ is a character";
    EXPECT_EQ(list({.search = "in.example.com"}, &total), (V{4, 3, 2, 1, 0}));
    EXPECT_EQ(list({.search = "nothing"}, &total), V{});
    EXPECT_EQ(total, 0);

    EXPECT_EQ(list({.start = kT0 + 10, .end = kT0 + 20}, &total), (V{3, 2, 1})) << "inclusive";
    EXPECT_EQ(total, 3);
    EXPECT_EQ(list({.start = kT0 + 21}), (V{4}));
    EXPECT_EQ(list({.end = kT0 + 9}), (V{0}));
    EXPECT_EQ(list({.start = 32'503'680'000'000}, &total), V{}) << "the year 3000";
    EXPECT_EQ(total, 0);
    EXPECT_EQ(list({.end = -62'135'596'800'000}), V{}) << "the year 1";
    EXPECT_EQ(list({.page = 2, .limit = 1, .search = "order", .start = kT0}, &total), (V{0}));
    EXPECT_EQ(total, 2);
}

}  // namespace
}  // namespace posthorn::store::contract
