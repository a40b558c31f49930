// The store contract (store/contract/) run against PgStore: each test gets a database of its
// own, a copy of one the process migrated once (CREATE DATABASE … TEMPLATE), dropped when the
// test ends. The server is PH_TEST_PG_DSN's (store/pg/detail/testing/test_databases.hpp).
#include "core/log.hpp"
#include "store/contract/contract.hpp"
#include "store/pg/detail/testing/test_databases.hpp"
#include "store/pg/pg_store.hpp"

namespace posthorn::store::contract {
namespace {

using pg::testing::TestDatabase;

// The template: migrated once per process, by a store that is closed before it is copied.
const TestDatabase* migrated_template() {
    static std::unique_ptr<TestDatabase> db = [] {
        auto d = TestDatabase::make();
        if (!d) return d;
        auto s = pg::PgStore::open({.url = d->url(), .readers = 1, .listen = false});
        if (!s) {
            ADD_FAILURE() << "PgStore::open (migrating the template): " << s.error().message();
            return std::unique_ptr<TestDatabase>();
        }
        return d;
    }();
    return db.get();
}

// The database of the test that runs now (tests of one process run one at a time).
std::unique_ptr<TestDatabase>& current() {
    static std::unique_ptr<TestDatabase> db;
    return db;
}

// The search indexer runs when a test asks (Backend::index_searches), not in the background.
std::unique_ptr<Store> open_at(const std::string& url) {
    auto s = pg::PgStore::open({.url = url, .readers = 2, .index_searches = false});
    if (!s) {
        ADD_FAILURE() << "PgStore::open: " << s.error().message();
        return nullptr;
    }
    return std::move(*s);
}

Backend pg_backend() {
    return Backend{
        .name = "pg",
        .open_fresh = []() -> std::unique_ptr<Store> {
            log::set_level(log::Level::warn);                // not the connections of every test
            if (!pg::testing::server_url()) return nullptr;  // skipped, or failed if required
            const auto* tpl = migrated_template();
            if (!tpl) {
                ADD_FAILURE() << "no migrated template database";
                return nullptr;
            }
            current() = TestDatabase::make(tpl->name());
            if (!current()) return nullptr;
            return open_at(current()->url());
        },
        .open_again = []() -> std::unique_ptr<Store> {
            if (!current()) return nullptr;
            return open_at(current()->url());
        },
        .clean_up = [] { current().reset(); },
        .index_searches =
            [](Store& s) {
                auto n = dynamic_cast<pg::PgStore&>(s).index_searches();
                ASSERT_TRUE(n) << n.error().message();
                EXPECT_GT(*n, 0) << "emails waited for the index";
            },
    };
}

INSTANTIATE_TEST_SUITE_P(Pg, StoreContract, ::testing::Values(pg_backend()), backend_name);

}  // namespace
}  // namespace posthorn::store::contract
