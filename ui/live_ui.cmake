# Live attach in the GUI (issue 5): File > Attach, live windows, the NVML gap bar.
# include()d from ui/CMakeLists.txt.
target_sources(memscope_ui PRIVATE attach_dialog.cpp live_session.cpp live_window.cpp memory_gap_bar.cpp)
target_compile_definitions(memscope_ui PRIVATE MEMSCOPE_AGENT_SOURCE_DIR="${PROJECT_SOURCE_DIR}/agent")
