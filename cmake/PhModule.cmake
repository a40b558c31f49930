# ph_module(name DEPS ph_x ... PRIVATE_DEPS Lib::x ...)
#
# One folder of src/ = one static library ph_<name> built from its *.cpp (not *_test.cpp),
# and, when the folder has *_test.cpp files, one GoogleTest executable ph_<name>_tests
# registered with ctest under the label "unit". DEPS is the module's allowed set of lower
# modules (CONVENTIONS §1); tools/check_layers.py enforces the same set on #includes.
function(ph_module name)
  cmake_parse_arguments(ARG "" "" "DEPS;PRIVATE_DEPS;TEST_DEPS" ${ARGN})
  file(GLOB_RECURSE srcs CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/*.cpp)
  file(GLOB_RECURSE tests CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/*_test.cpp)
  list(FILTER srcs EXCLUDE REGEX "_(test|pgtest|fuzz)\\.cpp$")
  add_library(ph_${name} STATIC ${srcs})
  target_include_directories(ph_${name} PUBLIC ${PROJECT_SOURCE_DIR}/src)
  target_link_libraries(ph_${name} PUBLIC ${ARG_DEPS} PRIVATE ${ARG_PRIVATE_DEPS})
  ph_warnings(ph_${name})
  if(tests)
    add_executable(ph_${name}_tests ${tests})
    target_link_libraries(ph_${name}_tests PRIVATE ph_${name} ${ARG_PRIVATE_DEPS} ${ARG_TEST_DEPS}
                                                   GTest::gtest GTest::gtest_main GTest::gmock)
    ph_warnings(ph_${name}_tests)
    add_test(NAME unit.${name} COMMAND ph_${name}_tests)
    set_tests_properties(unit.${name} PROPERTIES LABELS "unit")
  endif()
endfunction()
