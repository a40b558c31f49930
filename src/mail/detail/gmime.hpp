// RAII for GMime objects (CONVENTIONS §7). Private to mail/.
#pragma once

#include <gmime/gmime.h>

#include "core/c_ptr.hpp"

namespace posthorn::mail::detail {

template <class T>
using GObj = CPtr<T, g_object_unref>;

// Constructing a GObj adopts a reference; `retain` adds one to a borrowed pointer.
template <class T>
GObj<T> retain(T* borrowed) {
    g_object_ref(borrowed);
    return GObj<T>{borrowed};
}

}  // namespace posthorn::mail::detail
