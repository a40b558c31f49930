# The dashboard's static files, compiled into the binary (docs/dashboard.md). Run at build
# time as a script (cmake -P), by the custom command of src/app/CMakeLists.txt:
#   -DWEB=<source>/web -DOUT_DIR=<build>/web -DOUT_CPP=<build>/.../web_assets.cpp -DNODE=<node>
# It checks that web/node_modules is there when the lock file names packages, runs
# `node web/build.mjs OUT_DIR`, and writes OUT_CPP: one byte array per file of OUT_DIR and
# the table app::web_assets() answers ({path, content type, bytes, ETag}). Nothing is read
# from disk at run time.
cmake_minimum_required(VERSION 3.25)

file(READ ${WEB}/package-lock.json lock)
if(lock MATCHES "\"node_modules/" AND NOT EXISTS ${WEB}/node_modules)
  message(FATAL_ERROR "web/node_modules is missing: run scripts/install-deps.sh "
                      "(it runs npm ci --prefix web)")
endif()

file(REMOVE_RECURSE ${OUT_DIR})
execute_process(COMMAND ${NODE} ${WEB}/build.mjs ${OUT_DIR} RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "node web/build.mjs ${OUT_DIR} failed (${rc})")
endif()
if(NOT EXISTS ${OUT_DIR}/index.html)
  message(FATAL_ERROR "node web/build.mjs wrote no index.html into ${OUT_DIR}")
endif()

function(ph_content_type name out)
  string(TOLOWER "${name}" lower)
  get_filename_component(ext "${lower}" LAST_EXT)
  if(ext STREQUAL ".html")
    set(type "text/html; charset=utf-8")
  elseif(ext STREQUAL ".js" OR ext STREQUAL ".mjs")
    set(type "text/javascript; charset=utf-8")
  elseif(ext STREQUAL ".css")
    set(type "text/css; charset=utf-8")
  elseif(ext STREQUAL ".svg")
    set(type "image/svg+xml")
  elseif(ext STREQUAL ".png")
    set(type "image/png")
  elseif(ext STREQUAL ".jpg" OR ext STREQUAL ".jpeg")
    set(type "image/jpeg")
  elseif(ext STREQUAL ".webp")
    set(type "image/webp")
  elseif(ext STREQUAL ".ico")
    set(type "image/x-icon")
  elseif(ext STREQUAL ".woff2")
    set(type "font/woff2")
  elseif(ext STREQUAL ".woff")
    set(type "font/woff")
  elseif(ext STREQUAL ".json" OR ext STREQUAL ".map")
    set(type "application/json")
  elseif(ext STREQUAL ".txt")
    set(type "text/plain; charset=utf-8")
  else()
    set(type "application/octet-stream")
  endif()
  set(${out} "${type}" PARENT_SCOPE)
endfunction()

file(GLOB_RECURSE files RELATIVE ${OUT_DIR} LIST_DIRECTORIES false ${OUT_DIR}/*)
list(SORT files)
set(arrays "")
set(table "")
set(n 0)
foreach(f ${files})
  file(READ ${OUT_DIR}/${f} hex HEX)
  file(SHA256 ${OUT_DIR}/${f} sha)
  string(SUBSTRING "${sha}" 0 32 sha)
  string(LENGTH "${hex}" hexlen)
  math(EXPR size "${hexlen} / 2")
  string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," bytes "${hex}")
  ph_content_type("${f}" type)
  if(size EQUAL 0)
    string(APPEND arrays "constexpr unsigned char f${n}[1] = {0};\n")
  else()
    string(APPEND arrays "constexpr unsigned char f${n}[${size}] = {\n${bytes}};\n")
  endif()
  string(APPEND table
    "    {\"${f}\", \"${type}\", {reinterpret_cast<const char*>(f${n}), ${size}}, "
    "\"\\\"${sha}\\\"\"},\n")
  math(EXPR n "${n} + 1")
endforeach()

set(body "// generated from the output of web/build.mjs by cmake/PhWebAssets.cmake; do not edit
#include \"app/web_assets.hpp\"

#include <array>

namespace posthorn::app {
namespace {
// NOLINTBEGIN
${arrays}
const std::array<api::StaticFile, ${n}> kFiles{{
${table}}};
// NOLINTEND
}  // namespace

std::span<const api::StaticFile> web_assets() { return kFiles; }

}  // namespace posthorn::app
")
file(WRITE ${OUT_CPP} "${body}")
