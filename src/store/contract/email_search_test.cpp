// The contract of list_emails and list_envelopes: which emails a query finds, in which
// order, on which page, and the total. Written to the letter, so that a faster back end (or
// a faster query) gives the very same answers: a search is a case-insensitive (ASCII)
// substring with no wildcards; date bounds are inclusive to the millisecond; ties sort by
// id in the same direction; text sorts byte by byte ("B" before "a").
#include "store/contract/contract.hpp"

namespace posthorn::store::contract {
namespace {

struct Spec {
    UnixMs at;
    std::string subject, from_email, from_name, to_display;
    std::vector<std::pair<std::string, domain::RecipientType>> recipients;
};

// e0…e5 of account A (e2 and e3 at one millisecond), and one of account B that matches
// every search.
const std::vector<Spec> kSpecs = {
    {kT0,
     "Invoice 2027-01",
     "billing@mail.example.com",
     "Billing",
     "alice@example.net",
     {{"alice@example.net", domain::RecipientType::to},
      {"carol@example.org", domain::RecipientType::cc}}},
    {kT0 + 10,
     "Welcome aboard",
     "hello@mail.example.com",
     "Team",
     "bob@example.net",
     {{"bob@example.net", domain::RecipientType::to}}},
    {kT0 + 20,
     "100% off_today",
     "promo@mail.example.com",
     "Promo",
     "zed@example.net",
     {{"zed@example.net", domain::RecipientType::to},
      {"alice@example.net", domain::RecipientType::bcc}}},
    {kT0 + 20,
     "INVOICE reminder",
     "billing@mail.example.com",
     "Billing",
     "dave@example.net",
     {{"dave@example.net", domain::RecipientType::to}}},
    {kT0 + 30,
     "Weekly digest",
     "news@mail.example.com",
     "News",
     "Erin <erin@example.net>",
     {{"erin@example.net", domain::RecipientType::to}}},
    {kT0 + 40,
     "10 off today",
     "promo@mail.example.com",
     "Promo",
     "alice@example.net",
     {{"alice@example.net", domain::RecipientType::to}}},
};

// The emails of kSpecs written for account A, and B's, and the answers of the lists.
class SearchSet {
  public:
    // The first `indexed` emails of kSpecs (and B's, when that is all of them) are in the
    // back end's search index before the others are written (Backend::index_searches).
    explicit SearchSet(StoreContract& t, std::size_t indexed = 0) : t_(t) {
        a_ = t.make_account("a");
        b_ = t.make_account("b");
        const auto da = t.make_domain(a_);
        for (const auto& s : kSpecs) {
            if (indexed > 0 && emails_.size() == indexed) t.index_searches();
            auto n = new_email(a_, da, 0, s.at);
            n.email.subject = s.subject;
            n.email.from_email = s.from_email;
            n.email.from_name = s.from_name;
            n.email.to_display = s.to_display;
            for (const auto& [address, type] : s.recipients)
                n.recipients.push_back({.address = address, .domain = "example.net", .type = type});
            n.total_recipients = static_cast<int>(s.recipients.size());
            emails_.push_back(n.email);
            t.create(std::move(n));
        }
        auto nb = new_email(b_, t.make_domain(b_), 1, kT0 + 25);
        nb.email.subject = "Invoice 100% off_today digest, 10 off today";
        nb.email.from_email = "billing@mail.example.com";
        nb.email.from_name = "Team";
        nb.recipients[0].address = "alice@example.net";
        t.create(std::move(nb));
        if (indexed >= kSpecs.size()) t.index_searches();
    }

    // The indexes (into kSpecs) of what list_emails / list_envelopes answer for `q` in
    // account A, after checking that the page is A's and holds at most q.limit items.
    std::vector<int> emails(SearchQuery q, std::int64_t* total = nullptr) {
        q.account_id = a_.id;
        auto page = StoreContract::run(t_.store().list_emails(q));
        EXPECT_TRUE(page) << page.error().message();
        if (!page) return {};
        EXPECT_LE(static_cast<std::int64_t>(page->items.size()), q.limit);
        if (total) *total = page->total;
        std::vector<int> out;
        for (const auto& e : page->items) out.push_back(index_of(e.id, e.account_id));
        return out;
    }
    std::vector<int> envelopes(SearchQuery q, std::int64_t* total = nullptr) {
        q.account_id = a_.id;
        auto page = StoreContract::run(t_.store().list_envelopes(q));
        EXPECT_TRUE(page) << page.error().message();
        if (!page) return {};
        EXPECT_LE(static_cast<std::int64_t>(page->items.size()), q.limit);
        if (total) *total = page->total;
        std::vector<int> out;
        for (const auto& v : page->items) {
            const int i = index_of(v.email_id, v.account_id);
            if (i >= 0) {
                EXPECT_EQ(v.id, emails_[static_cast<std::size_t>(i)].envelope_id);
            }
            out.push_back(i);
        }
        return out;
    }

    const Account& a() const { return a_; }
    const Account& b() const { return b_; }
    const Email& email(int i) const { return emails_.at(static_cast<std::size_t>(i)); }

  private:
    int index_of(const std::string& email_id, const std::string& account_id) {
        EXPECT_EQ(account_id, a_.id);
        for (std::size_t i = 0; i < emails_.size(); ++i)
            if (emails_[i].id == email_id) return static_cast<int>(i);
        return -1;  // not one of A's
    }

    StoreContract& t_;
    Account a_, b_;
    std::vector<Email> emails_;  // as written, in the order of kSpecs
};

using V = std::vector<int>;

TEST_P(StoreContract, EmailsAreListedNewestFirstByPages) {
    SearchSet s(*this);
    std::int64_t total = 0;
    EXPECT_EQ(s.emails({.limit = 10}, &total), (V{5, 4, 3, 2, 1, 0})) << "e3 and e2: by id";
    EXPECT_EQ(total, 6);
    EXPECT_EQ(s.emails({.limit = 10, .order = SortOrder::asc}), (V{0, 1, 2, 3, 4, 5}));
    EXPECT_EQ(s.emails({.page = 1, .limit = 4}, &total), (V{5, 4, 3, 2}));
    EXPECT_EQ(s.emails({.page = 2, .limit = 4}, &total), (V{1, 0}));
    EXPECT_EQ(total, 6);
    EXPECT_EQ(s.emails({.page = 3, .limit = 4}, &total), V{});
    EXPECT_EQ(total, 6) << "a page past the end still counts";
    EXPECT_EQ(s.emails({.page = 2, .limit = 2, .order = SortOrder::asc}), (V{2, 3}));

    auto page = run(store().list_emails({.account_id = s.a().id, .limit = 1}));
    ASSERT_EQ(page->items.size(), 1u);
    const auto& e = page->items[0];
    EXPECT_EQ(e.subject, "10 off today");
    EXPECT_EQ(e.from_email, "promo@mail.example.com");
    EXPECT_EQ(e.from_name, "Promo");
    EXPECT_EQ(e.to_display, "alice@example.net");
    EXPECT_EQ(e.envelope_id, s.email(5).envelope_id);
    EXPECT_EQ(e.status, domain::EmailStatus::queued);
    EXPECT_EQ(e.created_at, kT0 + 40);
    EXPECT_EQ(run(store().list_emails({.account_id = s.b().id}))->total, 1);
}

TEST_P(StoreContract, DateBoundsAreInclusiveToTheMillisecond) {
    SearchSet s(*this);
    std::int64_t total = 0;
    EXPECT_EQ(s.emails({.limit = 10, .start = kT0 + 20}, &total), (V{5, 4, 3, 2}));
    EXPECT_EQ(total, 4);
    EXPECT_EQ(s.emails({.limit = 10, .end = kT0 + 20}, &total), (V{3, 2, 1, 0}));
    EXPECT_EQ(total, 4);
    EXPECT_EQ(s.emails({.limit = 10, .start = kT0 + 20, .end = kT0 + 20}), (V{3, 2}));
    EXPECT_EQ(s.emails({.limit = 10, .start = kT0 + 11, .end = kT0 + 29}), (V{3, 2}));
    EXPECT_EQ(s.emails({.limit = 10, .end = kT0 + 19}), (V{1, 0}));
    EXPECT_EQ(s.emails({.limit = 10, .start = kT0 + 21, .end = kT0 + 29}, &total), V{});
    EXPECT_EQ(total, 0);
    EXPECT_EQ(s.emails({.limit = 10, .start = kT0 + 41}), V{});
    // Bounds far from today: the years 3000 and 1.
    constexpr UnixMs kYear3000 = 32'503'680'000'000, kYear1 = -62'135'596'800'000;
    EXPECT_EQ(s.emails({.limit = 10, .start = kYear3000}, &total), V{});
    EXPECT_EQ(total, 0);
    EXPECT_EQ(s.emails({.limit = 10, .end = kYear1}, &total), V{});
    EXPECT_EQ(total, 0);
    EXPECT_EQ(s.emails({.limit = 10, .start = kYear1, .end = kYear3000}, &total),
              (V{5, 4, 3, 2, 1, 0}));
    EXPECT_EQ(total, 6);
    EXPECT_EQ(s.emails({.page = 2, .limit = 1, .order = SortOrder::asc, .start = kT0 + 10}, &total),
              (V{2}));
    EXPECT_EQ(total, 5);
    EXPECT_EQ(s.envelopes({.limit = 10, .start = kT0 + 20, .end = kT0 + 30}, &total), (V{4, 3, 2}));
    EXPECT_EQ(total, 3);
}

void expect_email_searches(SearchSet& s) {
    std::int64_t total = 0;
    EXPECT_EQ(s.emails({.limit = 10, .search = "invoice"}, &total), (V{3, 0}));
    EXPECT_EQ(total, 2) << "case-insensitive, and account A's only";
    EXPECT_EQ(s.emails({.limit = 10, .search = "ALICE@"}, &total), (V{5, 2, 0})) << "to and bcc";
    EXPECT_EQ(s.emails({.limit = 10, .search = "Carol@Example.ORG"}), (V{0})) << "cc";
    EXPECT_EQ(s.emails({.limit = 10, .search = "billing"}, &total), V{}) << "not the sender";
    EXPECT_EQ(total, 0);
    EXPECT_EQ(s.emails({.limit = 10, .search = "Erin <"}), V{}) << "not the To display";
    EXPECT_EQ(s.emails({.limit = 10, .search = "0% off"}), (V{2})) << "% is a character";
    EXPECT_EQ(s.emails({.limit = 10, .search = "f_t"}), (V{2})) << "_ is a character";
    EXPECT_EQ(s.emails({.limit = 10, .search = "0 off"}), (V{5}));
    EXPECT_EQ(s.emails({.limit = 10, .search = "off"}), (V{5, 2}));
    EXPECT_EQ(s.emails({.limit = 10, .search = "zzz"}, &total), V{});
    EXPECT_EQ(s.emails({.limit = 10, .search = "alice", .start = kT0 + 1}), (V{5, 2}));
    EXPECT_EQ(s.emails({.page = 2, .limit = 2, .search = "alice"}, &total), (V{0}));
    EXPECT_EQ(total, 3);
    EXPECT_EQ(s.emails({.limit = 10, .order = SortOrder::asc, .search = "example"}),
              (V{0, 1, 2, 3, 4, 5}));
    EXPECT_EQ(s.emails({.limit = 10, .sort_by = "to_email", .search = "alice"}), (V{2, 5, 0}));
}

void expect_envelope_searches(SearchSet& s) {
    std::int64_t total = 0;
    EXPECT_EQ(s.envelopes({.limit = 10, .search = "BILLING@"}, &total), (V{3, 0})) << "sender";
    EXPECT_EQ(total, 2);
    EXPECT_EQ(s.envelopes({.limit = 10, .search = "team"}), (V{1})) << "sender's name";
    EXPECT_EQ(s.envelopes({.limit = 10, .search = "Digest"}), (V{4})) << "subject";
    EXPECT_EQ(s.envelopes({.limit = 10, .search = "0% off"}), (V{2}));
    EXPECT_EQ(s.envelopes({.limit = 10, .search = "alice"}), V{}) << "not the recipients";
    std::string env = s.email(1).envelope_id.substr(s.email(1).envelope_id.size() - 10);
    for (auto& c : env) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    EXPECT_EQ(s.envelopes({.limit = 10, .search = env}), (V{1})) << "envelope id";
    EXPECT_EQ(s.envelopes({.limit = 10, .search = s.email(1).envelope_id}), (V{1}));
    const auto& em = s.email(1).id;
    EXPECT_EQ(s.envelopes({.limit = 10, .search = em.substr(em.size() - 10)}), V{})
        << "not the email id";
    EXPECT_EQ(s.envelopes({.page = 2, .limit = 1, .search = "promo"}, &total), (V{2}));
    EXPECT_EQ(total, 2);
    EXPECT_EQ(s.envelopes({.limit = 10, .sort_by = "subject", .search = "off"}), (V{2, 5}));
}

TEST_P(StoreContract, EmailsAreSearchedBySubjectAndEveryRecipient) {
    SearchSet s(*this);
    expect_email_searches(s);
}

// A back end may index what the lists search apart from the write (SQLite's and PostgreSQL's
// search indexers): its answers are the same for emails in its index, for emails waiting for
// it, and for a mix.
TEST_P(StoreContract, SearchesAnswerTheSameOnceTheEmailsAreIndexed) {
    SearchSet s(*this, kSpecs.size());
    expect_email_searches(s);
    expect_envelope_searches(s);
}

TEST_P(StoreContract, SearchesAnswerTheSameWhenSomeEmailsAreIndexed) {
    SearchSet s(*this, 3);
    expect_email_searches(s);
    expect_envelope_searches(s);
}

TEST_P(StoreContract, EmailsSortByTheirToDisplay) {
    SearchSet s(*this);
    EXPECT_EQ(s.emails({.limit = 10, .sort_by = "to_email", .order = SortOrder::asc}),
              (V{4, 0, 5, 1, 3, 2}))
        << "\"Erin <…\" first (bytes), then the two alices by id";
    EXPECT_EQ(s.emails({.limit = 10, .sort_by = "to_email"}), (V{2, 3, 1, 5, 0, 4}));
    EXPECT_EQ(s.emails({.page = 2, .limit = 2, .sort_by = "to_email", .order = SortOrder::asc}),
              (V{5, 1}));
    EXPECT_EQ(s.emails({.limit = 10, .sort_by = "to_email", .search = "alice"}), (V{2, 5, 0}));
}

TEST_P(StoreContract, EnvelopesAreListedSortedAndSearched) {
    SearchSet s(*this);
    std::int64_t total = 0;
    EXPECT_EQ(s.envelopes({.limit = 10}, &total), (V{5, 4, 3, 2, 1, 0}));
    EXPECT_EQ(total, 6);
    EXPECT_EQ(s.envelopes({.limit = 10, .sort_by = "subject", .order = SortOrder::asc}),
              (V{5, 2, 3, 0, 4, 1}))
        << "bytes: \"10 \" < \"100\", \"INVOICE\" < \"Invoice\"";
    EXPECT_EQ(s.envelopes({.limit = 10, .sort_by = "subject"}), (V{1, 4, 0, 3, 2, 5}));
    EXPECT_EQ(s.envelopes({.limit = 10, .sort_by = "from_email", .order = SortOrder::asc}),
              (V{0, 3, 1, 4, 2, 5}));
    EXPECT_EQ(s.envelopes({.page = 1, .limit = 3, .sort_by = "from_email"}, &total), (V{5, 2, 4}));
    EXPECT_EQ(total, 6);

    expect_envelope_searches(s);

    auto page = run(store().list_envelopes({.account_id = s.a().id, .limit = 10}));
    ASSERT_EQ(page->items.size(), 6u);
    const auto& v = page->items[5];  // e0
    EXPECT_EQ(v.id, s.email(0).envelope_id);
    EXPECT_EQ(v.account_id, s.a().id);
    EXPECT_EQ(v.email_id, s.email(0).id);
    EXPECT_EQ(v.subject, "Invoice 2027-01");
    EXPECT_EQ(v.from_email, "billing@mail.example.com");
    EXPECT_EQ(v.from_name, "Billing");
    EXPECT_EQ(v.total_recipients, 2);
    EXPECT_EQ(v.created_at, kT0);
}

}  // namespace
}  // namespace posthorn::store::contract
