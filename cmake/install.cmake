# Install rules and the Debian package (cpack -G DEB in the build directory).
#
#   bin/memscope                              the app (or, with MEMSCOPE_BUILD_UI=OFF, the Qt-free CLI)
#   share/memscope/agent/                     the agent package + sitecustomize.py; `memscope record`
#                                             finds it at ../share/memscope/agent from the executable
#   share/memscope/samples/                   a few small snapshots
#   share/applications/memscope.desktop       with the snapshot MIME type: "Open with memscope"
#   share/mime/packages/memscope.xml          *.pickle, *.pkl, *.pickle.gz
#   share/icons/hicolor/256x256/apps/memscope.png
#   share/man/man1/memscope.1
#
# Debian's shared-mime-info and desktop-file-utils refresh their caches through dpkg triggers
# on those directories, so the package needs no maintainer scripts.
# `cmake --install` and cpack package what was built (cmake --build … --target memscope is
# enough) rather than first building every test and benchmark.
set(CMAKE_SKIP_INSTALL_ALL_DEPENDENCY ON)
install(TARGETS memscope RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(DIRECTORY agent/memscope_agent DESTINATION ${CMAKE_INSTALL_DATADIR}/memscope/agent
        PATTERN __pycache__ EXCLUDE PATTERN "*.pyc" EXCLUDE)
install(FILES agent/sitecustomize.py DESTINATION ${CMAKE_INSTALL_DATADIR}/memscope/agent)
install(FILES samples/llm_bs16.pickle samples/linear3.pickle samples/oom.pickle samples/release.pickle
        DESTINATION ${CMAKE_INSTALL_DATADIR}/memscope/samples)
configure_file(docs/memscope.1.in ${CMAKE_CURRENT_BINARY_DIR}/memscope.1 @ONLY)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/memscope.1 DESTINATION ${CMAKE_INSTALL_MANDIR}/man1)
install(FILES README.md DESTINATION ${CMAKE_INSTALL_DOCDIR})
if(MEMSCOPE_BUILD_UI)
  install(FILES resources/memscope.desktop DESTINATION ${CMAKE_INSTALL_DATADIR}/applications)
  install(FILES resources/memscope-mime.xml DESTINATION ${CMAKE_INSTALL_DATADIR}/mime/packages RENAME memscope.xml)
  install(FILES resources/memscope.png DESTINATION ${CMAKE_INSTALL_DATADIR}/icons/hicolor/256x256/apps)
endif()

set(CPACK_GENERATOR DEB)
if(MEMSCOPE_BUILD_UI)
  set(CPACK_PACKAGE_NAME memscope)
  set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "PyTorch GPU memory viewer: allocator snapshots, live attach, diagnoses")
else()
  set(CPACK_PACKAGE_NAME memscope-cli)
  set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "PyTorch GPU memory snapshots from the command line (no GUI)")
  set(CPACK_DEBIAN_PACKAGE_CONFLICTS memscope)
endif()
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_VENDOR "memscope")
set(CPACK_PACKAGE_DESCRIPTION "memscope reads the allocator snapshots torch.cuda.memory._dump_snapshot() writes,
replays every allocator event, attributes memory to parameters, optimizer state, gradients,
activations, inputs and intermediates, diagnoses leaks, cache waste and OOMs, and records live
from a training process through its Python agent (share/memscope/agent).")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_STRIP_FILES ON)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
# A placeholder until the project has a public address.
set(CPACK_DEBIAN_PACKAGE_MAINTAINER "memscope maintainers <memscope@localhost>")
set(CPACK_DEBIAN_PACKAGE_SECTION devel)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
# The agent runs in the user's Python; `memscope record -- python …` and the replay agent need one.
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS "python3")
if(MEMSCOPE_BUILD_PYTHON)
  # `import memscope` (python/CMakeLists.txt) is built for one python3 ABI; numpy and pandas for
  # its frames, matplotlib for its plot.
  set(CPACK_DEBIAN_PACKAGE_DEPENDS "python3 (>= ${MEMSCOPE_PYTHON_VERSION}), python3 (<< ${MEMSCOPE_PYTHON_NEXT_VERSION})")
  set(CPACK_DEBIAN_PACKAGE_RECOMMENDS "python3, python3-numpy, python3-pandas, python3-matplotlib")
endif()
include(CPack)
