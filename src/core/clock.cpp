#include "core/clock.hpp"

#include <chrono>

namespace posthorn::core {

UnixMs SystemClock::now_ms() const {
    using namespace std::chrono;
    return duration_cast<milliseconds>(system_clock::now().time_since_epoch()).count();
}

}  // namespace posthorn::core
