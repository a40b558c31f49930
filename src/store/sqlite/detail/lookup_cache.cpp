#include "store/sqlite/detail/lookup_cache.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>

namespace posthorn::store::sqlite::detail {

namespace {
constexpr std::size_t kFileBytes = sizeof(std::uint64_t);
}

Result<Epoch> Epoch::open(const std::string& path, unsigned mode) {
    const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, mode & 0777);
    if (fd < 0) return error_code(errno, boost::system::system_category());
    (void)::fchmod(fd, mode & 0777);  // as asked, whatever the umask took away (as SQLite does)
    struct stat st {};
    // A new file is made the size of the counter (zero); one that has it already is left
    // alone, so that two processes starting together do not reset each other's count.
    if (::fstat(fd, &st) != 0 ||
        (static_cast<std::size_t>(st.st_size) < kFileBytes && ::ftruncate(fd, kFileBytes) != 0)) {
        const int e = errno;
        ::close(fd);
        return error_code(e, boost::system::system_category());
    }
    void* map = ::mmap(nullptr, kFileBytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    const int e = errno;
    ::close(fd);  // the mapping keeps the file
    if (map == MAP_FAILED) return error_code(e, boost::system::system_category());
    return Epoch(static_cast<std::uint64_t*>(map));
}

Epoch& Epoch::operator=(Epoch&& other) noexcept {
    if (this != &other) {
        if (word_) ::munmap(word_, kFileBytes);
        word_ = other.word_;
        other.word_ = nullptr;
    }
    return *this;
}

Epoch::~Epoch() {
    if (word_) ::munmap(word_, kFileBytes);
}

// Shared memory between processes: lock-free atomics on x86-64 and the other targets we
// build for work across processes as within one.
static_assert(std::atomic_ref<std::uint64_t>::is_always_lock_free);

std::uint64_t Epoch::load() const {
    return word_ ? std::atomic_ref<std::uint64_t>(*word_).load(std::memory_order_acquire) : 0;
}

void Epoch::bump() {
    if (word_) std::atomic_ref<std::uint64_t>(*word_).fetch_add(1, std::memory_order_acq_rel);
}

}  // namespace posthorn::store::sqlite::detail
