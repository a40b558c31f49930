// A driver for the fuzz targets of this folder where libFuzzer is not there (GCC builds: the
// `fuzz.*` tests of `make test`): runs every file of the seed corpus through the target,
// then `runs` inputs made from them by the kind of mutations libFuzzer starts with (bytes
// flipped, inserted, dropped or repeated, a seed cut short, two seeds spliced, a
// "dictionary" token from the seeds dropped in), from a fixed seed so that a failure
// reproduces. It finds what a few thousand cheap mutations find; coverage-guided runs are
// `make fuzz` (clang, libFuzzer, ASan and UBSan; docs/testing.md).
//
// usage: <target> CORPUS_DIR [runs] [max_len]
// A target reports a broken invariant with __builtin_trap(), which ends the run with
// SIGILL; on that or any other crash the input is written to ./crash-smoke-input first.
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <iterator>
#include <random>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size);
extern "C" int LLVMFuzzerInitialize(int* argc, char*** argv) __attribute__((weak));

namespace {

using Bytes = std::string;

std::vector<Bytes> read_corpus(const std::filesystem::path& dir) {
    std::vector<Bytes> out;
    std::vector<std::filesystem::path> files;
    for (const auto& e : std::filesystem::directory_iterator(dir))
        if (e.is_regular_file()) files.push_back(e.path());
    std::sort(files.begin(), files.end());  // the same order on every machine
    for (const auto& f : files) {
        std::ifstream in(f, std::ios::binary);
        out.emplace_back(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
    }
    return out;
}

// Tokens for insertion: the words and punctuation runs of the seeds, as libFuzzer's
// dictionary would hold ("MAIL FROM:", "Content-Type", "\r\n.\r\n"…).
std::vector<Bytes> tokens_of(const std::vector<Bytes>& corpus) {
    std::vector<Bytes> out;
    for (const auto& s : corpus) {
        std::size_t i = 0;
        while (i < s.size()) {
            const std::size_t len = 1 + (s[i] * 7 + i) % 12;
            out.push_back(s.substr(i, len));
            i += len;
        }
    }
    if (out.empty()) out.push_back("\r\n");
    return out;
}

Bytes mutate(const std::vector<Bytes>& corpus, const std::vector<Bytes>& tokens,
             std::mt19937_64& rng, std::size_t max_len) {
    auto pick = [&rng](std::size_t n) { return n == 0 ? 0 : static_cast<std::size_t>(rng() % n); };
    Bytes b = corpus.empty() ? Bytes() : corpus[pick(corpus.size())];
    const int rounds = 1 + static_cast<int>(pick(6));
    for (int r = 0; r < rounds; ++r) {
        switch (pick(8)) {
            case 0:  // flip a bit
                if (!b.empty()) b[pick(b.size())] ^= static_cast<char>(1u << pick(8));
                break;
            case 1:  // a random byte somewhere
                b.insert(b.begin() + static_cast<std::ptrdiff_t>(pick(b.size() + 1)),
                         static_cast<char>(pick(256)));
                break;
            case 2:  // drop a run
                if (!b.empty()) {
                    const auto at = pick(b.size());
                    b.erase(at, 1 + pick(std::min<std::size_t>(16, b.size() - at)));
                }
                break;
            case 3:  // repeat a run
                if (!b.empty()) {
                    const auto at = pick(b.size());
                    const auto run = b.substr(at, 1 + pick(32));
                    for (std::size_t k = 1 + pick(64); k > 0; --k) b.insert(at, run);
                }
                break;
            case 4:  // cut short
                b.resize(pick(b.size() + 1));
                break;
            case 5:  // splice with another seed
                if (!corpus.empty()) {
                    const auto& o = corpus[pick(corpus.size())];
                    b = b.substr(0, pick(b.size() + 1)) + o.substr(pick(o.size() + 1));
                }
                break;
            case 6:  // a token
                b.insert(pick(b.size() + 1), tokens[pick(tokens.size())]);
                break;
            default:  // an interesting byte: the ones parsers care about
                if (!b.empty()) {
                    static constexpr char kBytes[] = {'\0',   '\r',   '\n',   '.', ':', '<', '>',
                                                      '"',    '\\',   '=',    '?', '-', ' ', '\t',
                                                      '\x7f', '\xff', '\xc3', ';', '@', '{', '}'};
                    b[pick(b.size())] = kBytes[pick(sizeof kBytes)];
                }
        }
    }
    if (b.size() > max_len) b.resize(max_len);
    return b;
}

const Bytes* current = nullptr;  // the input being run, for the crash handler

// Async-signal-safe: writes the input out, then dies of the same signal.
extern "C" void on_crash(int sig) {
    if (current) {
        const int fd = ::open("crash-smoke-input", O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (fd >= 0) {
            (void)!::write(fd, current->data(), current->size());
            ::close(fd);
        }
        static constexpr char kMsg[] = "fuzz smoke: crashed; the input is in crash-smoke-input\n";
        (void)!::write(2, kMsg, sizeof kMsg - 1);
    }
    std::signal(sig, SIG_DFL);
    std::raise(sig);
}

void run_one(const Bytes& input) {
    current = &input;
    LLVMFuzzerTestOneInput(reinterpret_cast<const std::uint8_t*>(input.data()), input.size());
    current = nullptr;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc < 2) {
        std::fprintf(stderr, "usage: %s CORPUS_DIR [runs] [max_len]\n", argv[0]);
        return 2;
    }
    if (LLVMFuzzerInitialize) LLVMFuzzerInitialize(&argc, &argv);
    const auto corpus = read_corpus(argv[1]);
    const long runs = argc > 2 ? std::atol(argv[2]) : 20000;
    const std::size_t max_len = argc > 3 ? static_cast<std::size_t>(std::atol(argv[3])) : 65536;
    if (corpus.empty()) {
        std::fprintf(stderr, "%s: no seeds in %s\n", argv[0], argv[1]);
        return 2;
    }
    for (int sig : {SIGILL, SIGSEGV, SIGABRT, SIGBUS, SIGFPE}) std::signal(sig, on_crash);
    const auto tokens = tokens_of(corpus);
    for (const auto& seed : corpus) run_one(seed);
    std::mt19937_64 rng(20261123);
    for (long i = 0; i < runs; ++i) run_one(mutate(corpus, tokens, rng, max_len));
    std::printf("%zu seeds and %ld mutations: no invariant broken\n", corpus.size(), runs);
    return 0;
}
