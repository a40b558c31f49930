# ph_module(name DEPS ph_x ... PRIVATE_DEPS Lib::x ... TEST_DEPS ph_y_testing ...
#           TEST_ARGS --gtest_filter=... ...)
#
# One folder of src/ = one static library ph_<name> built from its *.cpp (not *_test.cpp,
# and nothing under a testing/ folder), and, when the folder has *_test.cpp files, one
# GoogleTest executable ph_<name>_tests registered with ctest under the label "unit". DEPS is
# the module's allowed set of lower modules (CONVENTIONS §1); tools/check_layers.py enforces
# the same set on #includes. TEST_ARGS are given to the executable by unit.<name> (a module
# whose executable also holds tests registered otherwise leaves them out with a filter:
# store/ and its contract tests).
#
# testing/ (at any depth: dns/testing/, store/sqlite/detail/testing/) holds fakes that only
# test targets link (CONVENTIONS §1). Its *.cpp become a separate static library
# ph_<name>_testing (PUBLIC ph_<name>); with headers only it is an INTERFACE library, so
# that any test can name it the same way. The module's own test executable links it; a test
# executable of another module asks for it with TEST_DEPS ph_<name>_testing. ph_<name>, and
# so the posthorn binary, never contain it.
function(ph_module name)
  cmake_parse_arguments(ARG "" "" "DEPS;PRIVATE_DEPS;TEST_DEPS;TEST_ARGS" ${ARGN})
  set(dir ${CMAKE_CURRENT_SOURCE_DIR})
  file(GLOB_RECURSE srcs CONFIGURE_DEPENDS ${dir}/*.cpp)
  file(GLOB_RECURSE tests CONFIGURE_DEPENDS ${dir}/*_test.cpp)
  file(GLOB_RECURSE testing_hdrs CONFIGURE_DEPENDS ${dir}/*.hpp ${dir}/*.h)
  list(FILTER srcs EXCLUDE REGEX "_(test|pgtest|fuzz)\\.cpp$")
  # Split off what lies under a testing/ folder of this module (matched on the path relative
  # to the module's folder, so a "testing" higher up in the checkout's path does not count).
  set(prod_srcs "")
  set(testing_srcs "")
  foreach(f ${srcs})
    file(RELATIVE_PATH rel ${dir} ${f})
    if(rel MATCHES "(^|/)testing/")
      list(APPEND testing_srcs ${f})
    else()
      list(APPEND prod_srcs ${f})
    endif()
  endforeach()
  set(has_testing_hdrs FALSE)
  foreach(f ${testing_hdrs})
    file(RELATIVE_PATH rel ${dir} ${f})
    if(rel MATCHES "(^|/)testing/")
      set(has_testing_hdrs TRUE)
    endif()
  endforeach()

  add_library(ph_${name} STATIC ${prod_srcs})
  target_include_directories(ph_${name} PUBLIC ${PROJECT_SOURCE_DIR}/src)
  target_link_libraries(ph_${name} PUBLIC ${ARG_DEPS} PRIVATE ${ARG_PRIVATE_DEPS})
  ph_warnings(ph_${name})

  if(testing_srcs)
    add_library(ph_${name}_testing STATIC ${testing_srcs})
    target_link_libraries(ph_${name}_testing PUBLIC ph_${name} PRIVATE ${ARG_PRIVATE_DEPS})
    ph_warnings(ph_${name}_testing)
  elseif(has_testing_hdrs)
    add_library(ph_${name}_testing INTERFACE)
    target_link_libraries(ph_${name}_testing INTERFACE ph_${name})
  endif()

  if(tests)
    add_executable(ph_${name}_tests ${tests})
    target_link_libraries(ph_${name}_tests PRIVATE ph_${name} ${ARG_PRIVATE_DEPS} ${ARG_TEST_DEPS}
                                                   GTest::gtest GTest::gtest_main GTest::gmock)
    if(TARGET ph_${name}_testing)
      target_link_libraries(ph_${name}_tests PRIVATE ph_${name}_testing)
    endif()
    ph_warnings(ph_${name}_tests)
    add_test(NAME unit.${name} COMMAND ph_${name}_tests ${ARG_TEST_ARGS})
    set_tests_properties(unit.${name} PROPERTIES LABELS "unit")
  endif()
endfunction()
