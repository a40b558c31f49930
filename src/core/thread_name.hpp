// core/thread_name.hpp — names the calling thread (at most 15 characters), so that `top -H`,
// `perf report --sort comm` and gdb show which of posthorn's threads does what; and lowers
// its priority, for the background threads.
#pragma once

#include <pthread.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

namespace posthorn::core {

inline void name_this_thread(const char* name) { pthread_setname_np(pthread_self(), name); }

// Raises the calling thread's nice value by `increment` (at most to 19): needs no privilege,
// and on Linux it is the thread's own. 0, or the errno of the failure.
inline int raise_this_thread_nice(int increment) {
    const auto self = static_cast<id_t>(gettid());
    errno = 0;
    const int nice = getpriority(PRIO_PROCESS, self);
    if (nice == -1 && errno != 0) return errno;
    return setpriority(PRIO_PROCESS, self, std::min(nice + increment, 19)) != 0 ? errno : 0;
}

}  // namespace posthorn::core
