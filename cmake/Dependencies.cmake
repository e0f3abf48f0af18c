# Third-party libraries, in this order of preference:
#   1. the system's packages (find_package) -- what CI uses;
#   2. header copies in third_party/ (scripts/vendor_deps writes them; useful on a GPU
#      machine that cannot download anything);
#   3. FetchContent, only when -DGPU100_FETCH_DEPS=ON (needs internet).
option(GPU100_FETCH_DEPS "Download fmt/CLI11/nlohmann_json/GoogleTest when not installed" OFF)
set(GPU100_THIRD_PARTY ${PROJECT_SOURCE_DIR}/third_party)

macro(gpu100_header_only_fallback target dir)
  if(NOT TARGET ${target} AND EXISTS ${GPU100_THIRD_PARTY}/${dir}/include)
    add_library(${target} INTERFACE IMPORTED GLOBAL)
    target_include_directories(${target} INTERFACE ${GPU100_THIRD_PARTY}/${dir}/include)
    message(STATUS "gpu100: using third_party/${dir} for ${target}")
  endif()
endmacro()

include(FetchContent)

find_package(fmt QUIET)
if(NOT fmt_FOUND)
  if(EXISTS ${GPU100_THIRD_PARTY}/fmt/include)
    add_library(fmt::fmt INTERFACE IMPORTED GLOBAL)
    target_include_directories(fmt::fmt INTERFACE ${GPU100_THIRD_PARTY}/fmt/include)
    target_compile_definitions(fmt::fmt INTERFACE FMT_HEADER_ONLY=1)
    message(STATUS "gpu100: using third_party/fmt (header-only)")
  elseif(GPU100_FETCH_DEPS)
    FetchContent_Declare(fmt GIT_REPOSITORY https://github.com/fmtlib/fmt.git GIT_TAG 10.2.1)
    FetchContent_MakeAvailable(fmt)
  else()
    message(FATAL_ERROR "fmt not found: apt-get install libfmt-dev, run scripts/vendor_deps, "
                        "or configure with -DGPU100_FETCH_DEPS=ON")
  endif()
endif()

find_package(CLI11 CONFIG QUIET)
gpu100_header_only_fallback(CLI11::CLI11 CLI11)
if(NOT TARGET CLI11::CLI11)
  if(GPU100_FETCH_DEPS)
    FetchContent_Declare(CLI11 GIT_REPOSITORY https://github.com/CLIUtils/CLI11.git GIT_TAG v2.3.2)
    FetchContent_MakeAvailable(CLI11)
  else()
    message(FATAL_ERROR "CLI11 not found: apt-get install libcli11-dev, run scripts/vendor_deps, "
                        "or configure with -DGPU100_FETCH_DEPS=ON")
  endif()
endif()

find_package(nlohmann_json CONFIG QUIET)
gpu100_header_only_fallback(nlohmann_json::nlohmann_json nlohmann_json)
if(NOT TARGET nlohmann_json::nlohmann_json)
  if(GPU100_FETCH_DEPS)
    FetchContent_Declare(json URL https://github.com/nlohmann/json/releases/download/v3.11.3/json.tar.xz)
    FetchContent_MakeAvailable(json)
  else()
    message(FATAL_ERROR "nlohmann_json not found: apt-get install nlohmann-json3-dev, run "
                        "scripts/vendor_deps, or configure with -DGPU100_FETCH_DEPS=ON")
  endif()
endif()

if(GPU100_BUILD_UNIT_TESTS)
  find_package(GTest QUIET)
  if(NOT GTest_FOUND AND EXISTS ${GPU100_THIRD_PARTY}/googletest/CMakeLists.txt)
    set(INSTALL_GTEST OFF CACHE BOOL "" FORCE)
    add_subdirectory(${GPU100_THIRD_PARTY}/googletest ${CMAKE_BINARY_DIR}/googletest EXCLUDE_FROM_ALL)
    if(NOT TARGET GTest::gtest_main)
      add_library(GTest::gtest_main ALIAS gtest_main)
    endif()
    set(GTest_FOUND TRUE)
  elseif(NOT GTest_FOUND AND GPU100_FETCH_DEPS)
    FetchContent_Declare(googletest GIT_REPOSITORY https://github.com/google/googletest.git
                         GIT_TAG v1.14.0)
    set(INSTALL_GTEST OFF CACHE BOOL "" FORCE)
    FetchContent_MakeAvailable(googletest)
    set(GTest_FOUND TRUE)
  endif()
  if(NOT GTest_FOUND)
    message(WARNING "GoogleTest not found: the unit tests of common/ are not built "
                    "(apt-get install libgtest-dev)")
    set(GPU100_BUILD_UNIT_TESTS OFF)
  endif()
endif()
