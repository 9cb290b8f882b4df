# The jar's linux-aarch64-musl library, cross-built (cmake/linux-musl.cmake).
set(TB_MUSL_ARCH aarch64)
include(${CMAKE_CURRENT_LIST_DIR}/linux-musl.cmake)
