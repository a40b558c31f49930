// RAII for GMime objects (CONVENTIONS §7) and writing them out. Private to mail/.
#pragma once

#include <gmime/gmime.h>

#include <string>

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

using FormatOptions = CPtr<GMimeFormatOptions, g_mime_format_options_free>;

// Format options for the wire: lines end in CRLF.
inline FormatOptions crlf_options() {
    FormatOptions options(g_mime_format_options_new());
    g_mime_format_options_set_newline_format(options.get(), GMIME_NEWLINE_FORMAT_DOS);
    return options;
}

// A GMime object (a message, a part) as it is written with `options`.
inline std::string write_to_string(GMimeObject* object, GMimeFormatOptions* options) {
    char* text = g_mime_object_to_string(object, options);
    std::string out(text ? text : "");
    g_free(text);
    return out;
}

}  // namespace posthorn::mail::detail
