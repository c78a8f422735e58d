# Cross-compiling for 64-bit Arm Linux (aarch64) on a Debian x86-64 host: Debian's cross compiler
# (g++-aarch64-linux-gnu) and its arm64 packages through multiarch (dpkg --add-architecture
# arm64), the tests run by qemu-user as CMake's cross-compiling emulator. tests/run_aarch64.sh
# installs and drives it.
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(CMAKE_C_COMPILER aarch64-linux-gnu-gcc)
set(CMAKE_CXX_COMPILER aarch64-linux-gnu-g++)
set(CMAKE_LIBRARY_ARCHITECTURE aarch64-linux-gnu)
# Headers and packages from the host's /usr (arm64 libraries in their multiarch folder), never
# the x86-64 libraries beside them; programs (objdump, the emulator) from the host.
set(CMAKE_FIND_ROOT_PATH /usr)
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE BOTH)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE BOTH)
set(CMAKE_IGNORE_PATH /usr/lib/x86_64-linux-gnu /lib/x86_64-linux-gnu
                      /usr/lib/x86_64-linux-gnu/cmake)
# The emulated core is chosen per test run (QEMU_CPU). The arm64 loader and libraries are the
# multiarch ones (libc6:arm64 puts the loader in /lib): no -L, which would mix the cross
# compiler's own libc (/usr/aarch64-linux-gnu) with the multiarch oneTBB, and hang.
if(NOT DEFINED CMAKE_CROSSCOMPILING_EMULATOR)
  set(CMAKE_CROSSCOMPILING_EMULATOR qemu-aarch64)
endif()
