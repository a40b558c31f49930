// The store contract (store/contract/) run against SqliteStore: each test gets a database
// file of its own in a new temporary directory, which goes when the test ends.
#include <unistd.h>

#include <atomic>
#include <filesystem>

#include "core/log.hpp"
#include "store/contract/contract.hpp"
#include "store/sqlite/sqlite_store.hpp"

namespace posthorn::store::contract {
namespace {

namespace fs = std::filesystem;

// The database of the test that runs now (tests of one process run one at a time).
fs::path& current_dir() {
    static fs::path dir;
    return dir;
}

std::unique_ptr<Store> open_at(const fs::path& dir) {
    auto s = sqlite::SqliteStore::open({.path = (dir / "contract.db").string(), .readers = 2});
    if (!s) {
        ADD_FAILURE() << "SqliteStore::open: " << s.error().message();
        return nullptr;
    }
    return std::move(*s);
}

Backend sqlite_backend() {
    return Backend{
        .name = "sqlite",
        .open_fresh =
            [] {
                static std::atomic<int> counter{0};
                log::set_level(log::Level::warn);  // not the migrations of every test
                current_dir() =
                    fs::temp_directory_path() /
                    ("ph_contract_" + std::to_string(::getpid()) + "_" + std::to_string(counter++));
                fs::remove_all(current_dir());
                fs::create_directories(current_dir());
                return open_at(current_dir());
            },
        .open_again = [] { return open_at(current_dir()); },
        .clean_up =
            [] {
                std::error_code ignored;
                fs::remove_all(current_dir(), ignored);
            },
        .index_searches =
            [](Store& s) {
                ASSERT_TRUE(dynamic_cast<sqlite::SqliteStore&>(s).wait_search_indexed(
                    std::chrono::seconds(10)));
            },
    };
}

INSTANTIATE_TEST_SUITE_P(Sqlite, StoreContract, ::testing::Values(sqlite_backend()), backend_name);

}  // namespace
}  // namespace posthorn::store::contract
