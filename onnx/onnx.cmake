# The ONNX importer's build: the ModelProto reader is generated at build time
# by protoc-c from the onnx.proto that Debian's libonnx-dev ships, and linked
# with libprotobuf-c. Included by the top-level CMakeLists.txt after the
# stage sources are listed and before the library is defined; it appends to
# TGC_SOURCES and TGC_DEPS. Also defines the conformance runner
# (tgc-conformance, tools/onnx_conformance.c) when Debian's libonnx-testdata
# is installed.
pkg_check_modules(PROTOBUFC REQUIRED IMPORTED_TARGET libprotobuf-c)
find_program(TGC_PROTOC_C protoc-c REQUIRED)
find_file(TGC_ONNX_PROTO onnx.proto PATHS /usr/include/onnx /usr/local/include/onnx NO_DEFAULT_PATH REQUIRED)

set(TGC_ONNX_GEN_DIR ${CMAKE_BINARY_DIR}/generated/onnx)
file(MAKE_DIRECTORY ${TGC_ONNX_GEN_DIR})
get_filename_component(TGC_ONNX_PROTO_DIR ${TGC_ONNX_PROTO} DIRECTORY)
add_custom_command(
  OUTPUT ${TGC_ONNX_GEN_DIR}/onnx.pb-c.c ${TGC_ONNX_GEN_DIR}/onnx.pb-c.h
  COMMAND ${TGC_PROTOC_C} --proto_path=${TGC_ONNX_PROTO_DIR} --c_out=${TGC_ONNX_GEN_DIR} ${TGC_ONNX_PROTO}
  DEPENDS ${TGC_ONNX_PROTO}
  COMMENT "Generating the ONNX protobuf reader with protoc-c"
  VERBATIM)
add_custom_target(tgc_onnx_gen DEPENDS ${TGC_ONNX_GEN_DIR}/onnx.pb-c.c ${TGC_ONNX_GEN_DIR}/onnx.pb-c.h)
list(APPEND TGC_SOURCES ${TGC_ONNX_GEN_DIR}/onnx.pb-c.c)
list(APPEND TGC_DEPS PkgConfig::PROTOBUFC)

# Only onnx/ sees the generated header.
file(GLOB TGC_ONNX_SOURCES CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/onnx/*.c)
set_source_files_properties(${TGC_ONNX_SOURCES} ${TGC_ONNX_GEN_DIR}/onnx.pb-c.c PROPERTIES
  INCLUDE_DIRECTORIES ${TGC_ONNX_GEN_DIR}
  OBJECT_DEPENDS ${TGC_ONNX_GEN_DIR}/onnx.pb-c.h)

# The conformance runner over ONNX's backend test data.
set(TGC_ONNX_TESTDATA /usr/share/libonnx-testdata/data CACHE PATH "ONNX backend test data (libonnx-testdata)")
if(EXISTS ${TGC_ONNX_TESTDATA}/node)
  add_executable(tgc-conformance ${CMAKE_SOURCE_DIR}/tools/onnx_conformance.c ${CMAKE_SOURCE_DIR}/tools/remove_tree.c)
  target_link_libraries(tgc-conformance PRIVATE tgc_shared)
  target_include_directories(tgc-conformance PRIVATE ${CMAKE_SOURCE_DIR}/include ${CMAKE_SOURCE_DIR})
  target_compile_definitions(tgc-conformance PRIVATE TGC_ONNX_TESTDATA="${TGC_ONNX_TESTDATA}")
  set_target_properties(tgc-conformance PROPERTIES BUILD_RPATH ${CMAKE_BINARY_DIR})
endif()
