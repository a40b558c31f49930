// core/thread_name.hpp — names the calling thread (at most 15 characters), so that `top -H`,
// `perf report --sort comm` and gdb show which of posthorn's threads does what.
#pragma once

#include <pthread.h>

namespace posthorn::core {

inline void name_this_thread(const char* name) { pthread_setname_np(pthread_self(), name); }

}  // namespace posthorn::core
